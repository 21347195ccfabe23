"""What is read out of the registry: the agenda, its calendar feed, reports, the summary, exports, verify."""

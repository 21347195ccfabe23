"""The ``esc-gis`` command line: one module per command, each a thin wrapper."""

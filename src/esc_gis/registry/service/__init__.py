"""The service layer: :class:`~esc_gis.registry.service.registry.Registry` and its commands, one module per concern."""

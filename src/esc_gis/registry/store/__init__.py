"""Where the registry is kept: GeoPackage or PostGIS behind one back-end interface, its schema and migrations."""

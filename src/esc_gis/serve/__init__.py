"""The web service: OGC API - Features and Processes (pygeoapi) and the public page.

``esc-gis serve`` publishes the registry's public view of the permits, the Village's layers
and a "Do I need a permit?" screening process, for any GIS (QGIS, ArcGIS Pro, GDAL's OAPIF
driver, Leaflet) and for residents at ``/``. Needs the ``serve`` extra (``make install`` in a
clone; from the wheel, ``pip install 'esc_gis-<version>-py3-none-any.whl[serve]'``).

The flow is one way: :mod:`~esc_gis.serve.config` checks and writes the configuration,
:mod:`~esc_gis.serve.screen_request` reads and bounds a screening request and calls the
screening engine, :mod:`~esc_gis.serve.process` and :mod:`~esc_gis.serve.provider` are
pygeoapi's plugins, :mod:`~esc_gis.serve.app` composes the WSGI application and
:mod:`~esc_gis.serve.server` runs it.
"""

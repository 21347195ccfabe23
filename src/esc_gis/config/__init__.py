"""The files esc_gis reads, as typed models: one home for what each may hold.

One module per file format, each with a pydantic model that says what the file may hold (its
keys, types, defaults and descriptions) and a function that words its problems as esc_gis
always has, raised by the file's owner as its own error (:class:`~esc_gis.errors.ProfileError`,
:class:`~esc_gis.errors.LayerSetError`, ...). The models are kept apart from their owners so the
JSON Schemas (``esc_gis/schemas``), the configuration reference and editors can read them
without importing geopandas, and so no owner holds a rule another needs (``[calendar]`` is read
by three).

The law stays in the profile's TOML: the models say where a number goes, never what it is.
"""

"""The engines that drive a layer's sites through read, measure and decide.

- :mod:`~esc_gis.screening.engines.whole`: the whole layer at once, in memory;
- :mod:`~esc_gis.screening.engines.local`: a streamed run's batches one after another, in this process;
- :mod:`~esc_gis.screening.engines.dask`: a streamed run's batches on a ``dask.distributed`` cluster.
"""

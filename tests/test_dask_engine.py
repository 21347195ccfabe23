"""``--engine dask``: the same screening on a dask.distributed cluster, row for row.

A real ``LocalCluster`` of two worker processes on this machine (loopback only), started once
for the module; each test compares its output with the single-process engine's.
"""

from __future__ import annotations

import pytest

from esc_gis.screening.stream import screen_to_file

from .test_stream import PARCELS, _read, _sites, same, screen_cli

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (make install has it)")


@pytest.fixture(scope="module")
def scheduler():
    """Two worker processes, one thread each, on 127.0.0.1; the scheduler's address."""
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        worker_dashboard_address="127.0.0.1:0",
    ) as cluster:
        yield cluster.scheduler_address


@pytest.mark.slow
def test_dask_engine_equals_the_single_process_engine(tmp_path, layers_path, scheduler):
    from esc_gis.screening.engines.dask import dask_engine

    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    local = screen_to_file(src, tmp_path / "local.gpkg", layers=layers_path, batch_rows=6)
    spread = screen_to_file(
        src, tmp_path / "dask.gpkg", layers=layers_path, batch_rows=6, engine=dask_engine(scheduler)
    )
    same(_read(tmp_path / "dask.gpkg"), _read(tmp_path / "local.gpkg"))
    assert (spread.rows, spread.batches) == (local.rows, local.batches) == (40, 7)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::esc_gis.errors.FarFromZoneWarning")
def test_dask_engine_on_the_real_v10_parcels(tmp_path, scheduler):
    from esc_gis.screening.engines.dask import dask_engine

    local = screen_to_file(PARCELS, tmp_path / "local.parquet", batch_rows=20)
    spread = screen_to_file(PARCELS, tmp_path / "dask.parquet", batch_rows=20, engine=dask_engine(scheduler))
    same(_read(tmp_path / "dask.parquet"), _read(tmp_path / "local.parquet"))
    assert list(spread.skipped["feature"]) == list(local.skipped["feature"])


@pytest.mark.slow
def test_cli_engine_dask_with_a_scheduler(tmp_path, layers_path, scheduler):
    from click.testing import CliRunner

    from esc_gis.cli.main import cli

    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    for out, extra in (("local.gpkg", []), ("dask.gpkg", ["--engine", "dask", "--scheduler", scheduler])):
        res = screen_cli(src, layers_path, tmp_path / out, "--batch-rows", 8, "-q", *extra)
        assert res.exit_code == 0, res.output
    same(_read(tmp_path / "dask.gpkg"), _read(tmp_path / "local.gpkg"))
    res = CliRunner().invoke(cli, ["screen", str(src), "-o", str(tmp_path / "x.gpkg"), "--workers", "2"])
    assert res.exit_code == 2 and "go with --engine dask" in res.output


@pytest.mark.slow
def test_engine_dask_starts_and_stops_its_own_local_cluster(tmp_path, layers_path):
    """Without --scheduler: two worker processes on 127.0.0.1, closed when the run ends."""
    from esc_gis.screening.engines.dask import dask_engine

    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    screen_to_file(src, tmp_path / "local.gpkg", layers=layers_path, batch_rows=10)
    screen_to_file(src, tmp_path / "dask.gpkg", layers=layers_path, batch_rows=10, engine=dask_engine(workers=2))
    same(_read(tmp_path / "dask.gpkg"), _read(tmp_path / "local.gpkg"))


def test_a_batch_travels_packed_and_comes_back_the_same():
    """Rows are zstd Arrow IPC on the wire: a batch's findings text, much repeated, shrinks."""
    import numpy as np
    import pyarrow as pa

    from esc_gis.screening.batches import BatchOut
    from esc_gis.screening.engines.dask import _pack, _unpack

    text = '[{"code": "permit_required", "section": "§ 540-6A", "message": "4,000 sq ft or more."}]'
    table = pa.table({"site_id": [f"s{i}" for i in range(2000)], "findings": [text] * 2000, "x": np.arange(2000.0)})
    packed = _pack(table)
    assert isinstance(packed, bytes) and len(packed) < table.nbytes / 10
    out = _unpack(BatchOut(None, np.arange(2000), None, [], 0, {}, packed=packed))
    assert out.result is not None and out.result.equals(table) and out.packed is None
    # A batch with no rows (problems only) travels as it is.
    empty = BatchOut(None, np.arange(0), None, [], 0, {})
    assert _pack(None) is None and _unpack(empty) is empty


def test_a_worker_hands_freed_memory_back_after_each_batch(monkeypatch):
    """After a batch is packed, glibc's malloc_trim returns what it freed (a no-op off glibc)."""
    import platform

    import numpy as np

    from esc_gis.screening.batches import BatchOut
    from esc_gis.screening.engines import dask as dask_engine

    calls: list[str] = []
    monkeypatch.setattr(
        dask_engine,
        "screen_job",
        lambda job, ctx: calls.append("screen") or BatchOut(None, np.arange(0), None, [], 0, {}),
    )
    monkeypatch.setattr(dask_engine, "_give_back_freed_memory", lambda: calls.append("trim"))
    assert dask_engine._screen_on_one_core(None, None).packed is None
    assert calls == ["screen", "trim"]
    monkeypatch.undo()
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert dask_engine._malloc_trim() is not None
    dask_engine._give_back_freed_memory()  # never raises


def test_dask_is_quiet_unless_asked(tmp_path, layers_path):
    """distributed logs about 24 INFO lines a run; the console shows them only with -v (issue 36)."""
    import subprocess
    import sys
    from pathlib import Path

    src = tmp_path / "sites.gpkg"
    _sites(40).to_file(src)
    esc = str(Path(sys.executable).parent / "esc-gis")
    base = ["screen", str(src), "--layers", str(layers_path), "--engine", "dask", "--workers", "1", "-q"]
    quiet = subprocess.run([esc, *base, "-o", str(tmp_path / "a.gpkg")], capture_output=True, text=True)
    assert quiet.returncode == 0, quiet.stderr
    assert "INFO distributed" not in quiet.stderr, quiet.stderr
    loud = subprocess.run([esc, "-v", *base, "-o", str(tmp_path / "b.gpkg")], capture_output=True, text=True)
    assert loud.returncode == 0 and "INFO distributed" in loud.stderr, loud.stderr

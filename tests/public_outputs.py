"""The public outputs of a registry, and the check that planted private values stay out of them.

Shared by the tests of inspections, enforcement and fees: each plants values only staff may
see, then writes every public output and greps it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from click.testing import CliRunner, Result

from esc_gis.cli.main import cli


def run_permits(*args: str) -> Result:
    """Run ``esc-gis permits ARGS``; a traceback in its output fails the test."""
    r = CliRunner().invoke(cli, ["permits", *args])
    assert "Traceback" not in r.output, r.output
    return r


def public_outputs(target: str, layers: Iterable[str], folder: Path, *, ics_on: str | None = None) -> list[Path]:
    """Write the public export (GeoPackage, GeoJSON, CSV), the public offline map and, with ``ics_on``, the feed."""
    lay = list(layers)
    outputs = []
    for name in ("public.gpkg", "public.geojson", "public.csv"):
        out = folder / name
        assert run_permits("export", target, "-o", str(out), *lay).exit_code == 0
        outputs.append(out)
    html = folder / "map.html"
    assert run_permits("map", target, "-o", str(html), "--public", "--offline", *lay).exit_code == 0
    outputs.append(html)
    if ics_on is not None:
        ics = folder / "d.ics"
        assert run_permits("calendar", target, "-o", str(ics), "--on", ics_on, *lay).exit_code == 0
        outputs.append(ics)
    return outputs


def assert_hidden(outputs: Iterable[Path], permit: str, planted: Iterable[str | bytes]) -> None:
    """Each output shows ``permit`` (the GeoPackage may store it compressed) and none of ``planted``."""
    values = [v if isinstance(v, bytes) else v.encode() for v in planted]
    for out in outputs:
        data = out.read_bytes()
        assert permit.encode() in data or out.suffix == ".gpkg", out.name  # the permit itself is there
        for value in values:
            assert value not in data, (out.name, value)

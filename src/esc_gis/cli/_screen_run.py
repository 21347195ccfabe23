"""What ``esc-gis screen`` does, apart from its options: imported when it runs, not for ``--help``."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click
import geopandas as gpd
import pandas as pd
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from esc_gis._outputs import check_sidecar, drop_sidecar, sidecar_path
from esc_gis._vsi import is_stdout
from esc_gis.cli._console import console
from esc_gis.cli._options import (
    PROGRESS_MODE,
    PlainProgress,
    progress_bar,
)
from esc_gis.io import check_output_path, run_findings_path, write_layer, write_run_findings
from esc_gis.screening import ScreeningRun, run_findings, screen_run

if TYPE_CHECKING:
    from esc_gis.screening.stream import StreamRun


def _field_map(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for v in values:
        name, sep, source = v.partition("=")
        if not sep or not name or not source:
            raise click.BadParameter(f"{v!r} is not NAME=SOURCE (e.g. activity=LANDUSE).", param_hint="--field")
        out[name.strip()] = source.strip()
    return out


#: Findings every applicable row has; the summary lists only the others.
_ROUTINE = {
    "jurisdiction_inside",
    "disturbed_area",
    "permit_required",
    "permit_not_required",
    "nearest_water",
    "steep_not_measured",
    "no_steep_slopes",
    "no_waters_layer",
}


_WHY_NOT = {
    "outside_jurisdiction": "outside",
    "excluded_state_agency": "state agency",
    "exempt_agricultural": "agricultural",
    "exempt_silviculture": "silviculture",
}


#: Summary column -> the run finding that leaves it empty, for the column's note.
_NOTE = {"steep sq ft": "steep_not_measured", "protective sq ft": "no_waters_layer", "water ft": "no_waters_layer"}


#: The summary's columns: key, heading (its unit on a second line), justification.
_COLUMNS: tuple[tuple[str, str, Literal["left", "right"]], ...] = (
    ("site", "site", "left"),
    ("plan", "plan", "left"),
    ("where", "where", "left"),
    ("disturbed sq ft", "area\nsq ft", "right"),
    ("plan sq ft", "plan\nsq ft", "right"),
    ("decision", "decision", "left"),
    ("stds", "stds", "left"),
    ("steep sq ft", "steep\nsq ft", "right"),
    ("protective sq ft", "prot.\nsq ft", "right"),
    ("water ft", "water\nft", "right"),
)
#: Columns whose words wrap at spaces (the others never wrap, except ids too long to fit).
_WRAPS = ("decision", "stds")
#: Narrowest an id column folds to when the ids cannot sit whole.
_FOLDED_ID = 6


def _summary_rows(shown: gpd.GeoDataFrame) -> list[tuple[list[str], list[str]]]:
    """Return each row's cells as shown (with rich markup) and as plain text (for widths)."""
    colour = {"required": "bold red", "not_required": "green", "not_applicable": "dim"}
    out = []
    for r in shown.itertuples():
        words = r.permit.replace("_", " ")
        decision = f"[{colour[r.permit]}]{words}[/]"
        if r.permit == "not_applicable":
            words = f"n/a: {_WHY_NOT[r.applicability]}"
            decision = f"[dim]{words}[/]"
        if r.permit_may_be_required:
            words += " (may be required)"
            decision += " [yellow](may be required)[/]"
        plain = [
            str(r.site_id),
            "" if pd.isna(r.plan_id) else str(r.plan_id),
            str(r.jurisdiction),
            _disturbed_cell(r.disturbed_sqft, r.disturbed_in_jurisdiction_sqft),
            f"{r.plan_disturbed_sqft:,.0f}",
            words,
            r.standards + (" + sediment" if r.sediment_standard else ""),
            *(
                "" if pd.isna(v) else f"{v:,.0f}"
                for v in (r.steep_disturbed_sqft, r.protective_disturbed_sqft, r.nearest_water_ft)
            ),
        ]
        shown_cells = [escape(c) for c in plain]
        shown_cells[5] = decision
        out.append((shown_cells, plain))
    return out


def summary_table(result: gpd.GeoDataFrame, *, max_rows: int = 40, width: int = 80) -> Table:
    """Build a readable table of a screening result: one line per site (up to ``max_rows``).

    It fits ``width`` columns with all ten columns there. Headings give their unit on a second
    line; numbers and places never wrap; the decision and standards wrap at spaces; and the
    ids (site, then plan) stay whole whenever they fit beside the rest, measured on the rows
    shown (at 80 columns a 16-character parcel id and a plan's name do); an id that cannot
    folds down its column. A site partly or wholly outside the jurisdiction shows its whole
    disturbed area marked ``*``, the part inside said under the table (:func:`disturbed_notes`);
    the caption names the columns and those this run could not measure.
    """
    table = Table(
        title=f"Screening: {len(result)} site(s)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=0,  # the box draws one space between columns
    )
    shown = result.head(max_rows)
    rows = _summary_rows(shown)

    def need(i: int, key: str, heading: str) -> int:
        words = [w for line in heading.split("\n") for w in line.split()]
        if key in _WRAPS:  # its longest word
            words += [w for _, plain in rows for w in plain[i].split()]
            return max(len(w) for w in words)
        return max([len(line) for line in heading.split("\n")] + [len(plain[i]) for _, plain in rows])

    widths = [need(i, key, heading) for i, (key, heading, _) in enumerate(_COLUMNS)]
    gaps = len(_COLUMNS) + 1  # one space between columns and at each edge
    others = sum(widths[2:]) + gaps
    whole_site = widths[0] + min(widths[1], _FOLDED_ID) + others <= width
    whole_plan = whole_site and widths[0] + widths[1] + others <= width
    whole = {"site": whole_site, "plan": whole_plan}
    for i, (key, heading, just) in enumerate(_COLUMNS):
        if key in whole and not whole[key]:
            # Folded within what the rest leaves (the site keeps all it can).
            room = width - others - (widths[1] if whole_plan else _FOLDED_ID) if key == "site" else _FOLDED_ID
            table.add_column(heading, justify=just, overflow="fold", max_width=max(_FOLDED_ID, room))
        else:
            table.add_column(heading, justify=just, no_wrap=key not in _WRAPS, min_width=widths[i])
    for cells, _ in rows:
        table.add_row(*cells)
    not_measured = {f["code"] for f in run_findings(result)}
    unmeasured = [h.split("\n")[0] for k, h, _ in _COLUMNS if _NOTE.get(k) in not_measured]
    more = f"... {len(result) - max_rows} more rows in the output file. " if len(result) > max_rows else ""
    table.caption = (
        f"{more}area: disturbed; plan: the common plan's disturbed total; steep: at or over the "
        "steep-slope threshold; prot.: in protective areas; water: to the nearest water."
        + (f" Not measured in this run: {', '.join(unmeasured)} (see 'Not checked' below)." if unmeasured else "")
    )
    table.caption_justify = "left"
    return table


def _partly_outside(disturbed_sqft: float, inside_sqft: float) -> bool:
    return round(inside_sqft) != round(disturbed_sqft)


def _disturbed_cell(disturbed_sqft: float, inside_sqft: float) -> str:
    """Show the whole disturbed area, marked ``*`` when part of it lies outside (said under the table)."""
    return f"{disturbed_sqft:,.0f}" + ("*" if _partly_outside(disturbed_sqft, inside_sqft) else "")


def disturbed_notes(result: gpd.GeoDataFrame, *, max_rows: int = 40) -> list[str]:
    """Return ``* site: N sq ft disturbed, M inside`` for the table's sites partly or wholly outside."""
    return [
        f"* {r.site_id}: {r.disturbed_sqft:,.0f} sq ft disturbed, {r.disturbed_in_jurisdiction_sqft:,.0f} inside "
        "the jurisdiction."
        for r in result.head(max_rows).itertuples()
        if _partly_outside(r.disturbed_sqft, r.disturbed_in_jurisdiction_sqft)
    ]


def skipped_path(output: str | Path, layer: str | None = None) -> Path:
    """Where the features skipped as not sites are written: beside OUTPUT, ``<output name>.skipped<ext>``.

    A layer added under another name (``--output-layer``) has its own: ``<output name>.<layer>.skipped<ext>``.
    """
    return sidecar_path(output, f"{layer}.skipped" if layer else "skipped")


def input_lines(run: ScreeningRun | StreamRun, skipped_file: Path | None) -> list[str]:
    """Say what of the sites layer was left out or given an id, and why: nothing is dropped silently.

    The whole-file run and the streamed one (``--batch-rows``) say it in the same words.
    """
    lines = []
    skipped = run.skipped if run.skipped is not None else ()
    if isinstance(run, ScreeningRun):
        generated, shown_ids = len(run.generated_ids), run.generated_ids[:5]
    else:  # a streamed run keeps the count and the first few ids only
        generated, shown_ids = run.generated_ids, run.generated_shown
    if run.schema == "v10":
        lines.append(f"Recognised the Wisconsin V10 parcel schema; site id: {run.id_field}.")
    if run.not_selected:
        lines.append(f"--where left out {run.not_selected:,} feature(s) of the sites file.")
    if run.skipped is not None and len(run.skipped):
        ids = Counter(str(v).strip() for v in run.skipped[run.id_field]) if run.id_field in run.skipped else Counter()
        top = ", ".join(f"{k} {v:,}" for k, v in ids.most_common(6))
        # With -o - there is no file beside the output: said, so none is thought dropped silently.
        where = (
            f"listed with their feature numbers in {skipped_file}."
            if skipped_file is not None
            else "not written (standard output carries the screening alone; write to a file to have them listed)."
        )
        lines.append(f"Skipped {len(skipped):,} feature(s) that are not parcels ({top}): rule {run.rule}; {where}")
    if generated:
        shown = ", ".join(shown_ids) + (", ..." if generated > 5 else "")
        lines.append(f"{generated:,} site(s) had no {run.id_field}; screened as row:<feature number> ({shown}).")
    return lines


def findings_lines(result: gpd.GeoDataFrame, *, max_rows: int = 40) -> list[str]:
    """Return ``site: code, code`` for the sites of the table that have findings beyond the routine ones."""
    lines = []
    for r in result.head(max_rows).itertuples():
        codes = [f["code"] for f in json.loads(r.findings) if f["code"] not in _ROUTINE]
        if codes:
            lines.append(f"{r.site_id}: {', '.join(codes)}")
    return lines


def run_findings_lines(result: gpd.GeoDataFrame) -> list[str]:
    """Return the run's own findings (checks made for no site), one readable line each."""
    return [_not_checked_line(f) for f in run_findings(result)]


def _not_checked_line(f: dict[str, str]) -> str:
    """One run finding (a check made for no site) in words."""
    return f"Not checked: {f['message']} ({f['section']}, {f['basis']}; columns left empty: {f['columns']})"


def counts_line(result: gpd.GeoDataFrame) -> str:
    """One line counting sites by permit decision."""
    c = Counter(result["permit"])
    may = int(result["permit_may_be_required"].sum())
    return (
        f"permit required: {c.get('required', 0)}, not required: {c.get('not_required', 0)} "
        f"(of which may be required: {may}), not applicable: {c.get('not_applicable', 0)}"
    )


def _dask(scheduler: str | None, workers: int | None) -> object:
    from esc_gis.screening.engines.dask import dask_engine

    return dask_engine(scheduler, workers=workers)


def _screen_streamed(
    sites: str, output: str, *, batch_rows: int, quiet: bool, overwrite: bool, why: str = "", **kw: object
) -> None:
    """Run ``--batch-rows``: the layer a batch at a time, with rate and ETA.

    :func:`esc_gis.screening.stream.screen_to_file` does the work.
    """
    from rich.progress import MofNCompleteColumn, TimeRemainingColumn

    from esc_gis.screening.stream import screen_to_file

    side = skipped_path(output)
    check_sidecar(side, output, overwrite=overwrite)
    check_sidecar(run_findings_path(output), output, overwrite=overwrite)
    bar: Progress | PlainProgress = Progress(
        TextColumn("screening"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("features"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=quiet,
        transient=True,
    )
    if PROGRESS_MODE.get() == "plain":
        bar = PlainProgress(disable=quiet)
    with bar:
        task = bar.add_task("screening", total=None, rate="")
        started = time.monotonic()

        def show(done: int, total: int) -> None:
            per_s = done / max(time.monotonic() - started, 1e-9)
            bar.update(task, completed=done, total=total, rate=f"{per_s:,.0f}/s")

        run = screen_to_file(
            sites,
            output,
            batch_rows=batch_rows,
            overwrite=overwrite,
            progress=show,
            **kw,  # type: ignore[arg-type]
        )
    if run.skipped is not None and len(run.skipped):
        # In the output's CRS, as the whole-file run writes it.
        crs = kw.get("dst_crs") if run.skipped.crs else None
        write_layer(run.skipped, side, overwrite=True, layer="skipped", dst_crs=crs)
    else:
        drop_sidecar(side)
    notes = write_run_findings(run.run_findings, output, overwrite=overwrite)
    if not quiet:
        if why:
            console().print(why, markup=False)
        # What was not checked, and what of the layer was left out, as the whole-file run says it.
        for f in run.run_findings:
            console().print(_not_checked_line(f), markup=False)
        has_skipped = run.skipped is not None and len(run.skipped) > 0
        for line in input_lines(run, side if has_skipped else None):
            console().print(line, markup=False)
        console().print(
            f"Wrote {run.rows:,} rows to {output} in {run.batches:,} batch(es) of up to {batch_rows:,}"
            + (f", the checks not made to {notes}" if notes else ""),
            markup=False,
        )


def _batch_rows(
    asked: int | None, engine: str, sites: str, sites_layer: str | None, output: str, whole_only: bool
) -> tuple[int | None, str]:
    """Return the batch size to stream with (None: the whole file at once) and why, when not asked for."""
    if asked is not None:
        return asked, ""
    from esc_gis.screening.stream import DEFAULT_BATCH_ROWS, STREAM_ABOVE_ROWS

    if engine == "dask":
        return DEFAULT_BATCH_ROWS, ""
    if whole_only or not _streams_by_itself(sites, sites_layer, output):
        return None, ""
    return DEFAULT_BATCH_ROWS, (
        f"The sites layer has over {STREAM_ABOVE_ROWS:,} features: screened {DEFAULT_BATCH_ROWS:,} at a time, "
        "its memory one batch's (give --batch-rows to choose the size)."
    )


def _streams_by_itself(sites: str, sites_layer: str | None, output: str) -> bool:
    """Say whether a run given no --batch-rows streams anyway: a large layer, to a format written batch by batch.

    GeoJSON is written whole only, so a run writing it stays whole; so does a run that needs
    the whole result or a layer added to a file (``--map``, ``--profile-by``, ``--update``,
    ``--output-layer``), which the caller checks first.
    """
    from esc_gis.io import OUTPUT_FORMATS
    from esc_gis.screening.stream import STREAMABLE, streams_by_itself

    return OUTPUT_FORMATS.get(Path(output).suffix.lower()) in STREAMABLE and streams_by_itself(sites, layer=sites_layer)


def _refuse_strays(dask_options: bool, municipality_field: bool, dask_by_profile: bool = False) -> None:
    """Refuse an option given without the one it goes with, or with one it does not take."""
    if dask_options:
        raise click.UsageError("--scheduler and --workers go with --engine dask.")
    if municipality_field:
        raise click.UsageError("--municipality-field goes with --profile-by.")
    if dask_by_profile:
        raise click.UsageError("--profile-by runs in one process: give it without --engine dask.")


def _refuse_with_profile_by(*values: str | None) -> None:
    """Refuse the options ``--profile-by`` does not take yet, rather than ignore them."""
    names = ("--layer", "--where", "--disturbed-layer", "--disturbed-where", "--map")
    given = [n for n, v in zip(names, values, strict=True) if v is not None]
    if given:
        raise click.UsageError(f"--profile-by does not take {', '.join(given)} yet: cut the layer first.")


def _screen_by_municipality(
    sites: str,
    output: str,
    *,
    profile_by: str,
    profile: str | None,
    overwrite: bool,
    quiet: bool,
    dst_crs: str | None = None,
    **kw: Any,
) -> None:
    """Run ``--profile-by``: each site under its municipality's profile (:mod:`esc_gis.screening.municipalities`)."""
    from esc_gis.screening.municipalities import screen_by_municipality

    if profile is not None:
        raise click.UsageError(
            "--ordinance (--profile) and --ordinance-by (--profile-by) exclude each other: "
            "the layer names each site's profile."
        )
    side = skipped_path(output)
    to_stdout = is_stdout(output)
    if not to_stdout:
        check_sidecar(side, output, overwrite=overwrite)
        check_sidecar(run_findings_path(output), output, overwrite=overwrite)
    result = screen_by_municipality(sites, profile_by=profile_by, **kw)
    skipped = result.attrs.get("skipped")
    write_layer(result, output, overwrite=overwrite, dst_crs=dst_crs)
    if to_stdout:
        _stdout_notes(result, skipped)
    elif skipped is not None and len(skipped):
        write_layer(skipped, side, overwrite=True, layer="skipped", dst_crs=dst_crs if skipped.crs else None)
    else:
        drop_sidecar(side)
    if not to_stdout:
        write_run_findings(run_findings(result), output, overwrite=overwrite)
    if not quiet:
        counts = Counter(zip(result["municipality"].fillna("(none)"), result["permit"], strict=True))
        for (muni, permit), n in sorted(counts.items()):
            console().print(f"{muni}: {n:,} {permit}", markup=False)
        console().print(f"Wrote {len(result):,} rows to {output}", markup=False)


def _check_sidecars(output: str, side: Path, layer_tag: str | None, *, overwrite: bool) -> bool:
    """Check the files a whole-file run writes beside its output; return whether the output is standard output.

    A stale one (its output gone, or with --update its layer, which check_output_path found
    absent) is replaced. With ``-o -`` there are none (:func:`_stdout_notes` says what they would hold).
    """
    if is_stdout(output):
        return True
    check_sidecar(side, output, overwrite=overwrite)
    check_sidecar(run_findings_path(output, layer_tag), output, overwrite=overwrite)
    return False


def _write_sidecars(
    run: ScreeningRun, output: str, side: Path, layer_tag: str | None, *, overwrite: bool, dst_crs: str | None
) -> Path | None:
    """Write a whole-file run's skipped features and run findings beside its output; return the findings' file.

    Checked with the output before the work; the skipped features in the output's CRS, so the two overlay.
    """
    if len(run.skipped):
        crs = dst_crs if run.skipped.crs else None
        write_layer(run.skipped, side, overwrite=True, layer="skipped", dst_crs=crs)
    else:
        drop_sidecar(side)  # a list from an earlier run would describe this one wrongly
    return write_run_findings(run_findings(run.result), output, overwrite=overwrite, layer=layer_tag)


def _stdout_notes(result: gpd.GeoDataFrame, skipped: gpd.GeoDataFrame | None, *, quiet: bool = True) -> None:
    """With ``-o -``, say on stderr what the files beside an output would hold: the checks not made, the skipped.

    Said even with ``--quiet``: they are part of the answer (a column left empty, a feature
    not screened), and standard output carries the screening layer alone.
    """
    if not quiet:
        return  # the summary says them, on stderr
    for line in run_findings_lines(result):
        click.echo(line, err=True)
    if skipped is not None and len(skipped):
        click.echo(
            f"Skipped {len(skipped):,} feature(s) that are not sites: not written (standard output carries the "
            "screening alone; write to a file to have them listed).",
            err=True,
        )


def _refuse_layer_options(asked: bool, streamed: bool) -> None:
    """Refuse --output-layer/--update with a streamed or per-municipality run (not taken yet), not ignore them."""
    if asked and streamed:
        raise click.UsageError(
            "--output-layer and --update are not taken with --batch-rows, --engine dask or --ordinance-by yet: "
            "write a new file, then add its layer with ogr2ogr -update -nln NAME."
        )


def run(
    *,
    sites: str,
    disturbed: str | None,
    layers_path: str | None,
    profile_path: str | None,
    profile_by: str | None,
    municipality_field: str | None,
    batch_rows: int | None,
    engine: str,
    scheduler: str | None,
    workers: int | None,
    id_field: str,
    fields: tuple[str, ...],
    assume_crs: str | None,
    sites_layer: str | None,
    disturbed_layer: str | None,
    where: str | None,
    disturbed_where: str | None,
    skip_ids: str,
    output: str,
    map_path: str | None,
    offline: bool,
    output_layer: str,
    update: bool,
    dst_crs: str | None,
    overwrite: bool,
    quiet: bool,
) -> None:
    """Run ``esc-gis screen`` with its options (:func:`esc_gis.cli.screen.screen` documents them)."""
    field_map = _field_map(fields)
    layer_tag = None if output_layer == "screening" else output_layer  # names the layer's own sidecars
    _refuse_layer_options(update or bool(layer_tag), batch_rows is not None or engine == "dask" or bool(profile_by))
    # Fail before the work, not after; with --update, only a layer of that name is refused.
    check_output_path(output, overwrite=overwrite, update=update, layer=output_layer, dst_crs=dst_crs)
    whole_only = profile_by is not None or map_path is not None or update or layer_tag is not None
    batch_rows, why = _batch_rows(batch_rows, engine, sites, sites_layer, output, whole_only)
    _refuse_strays(
        engine == "local" and bool(scheduler or workers),
        municipality_field is not None and not profile_by,
        engine == "dask" and profile_by is not None,
    )
    # What every route reads the inputs with (the whole-file run below passes them by its own names).
    common: dict[str, Any] = {
        "disturbed": disturbed,
        "layers": layers_path,
        "id_field": id_field,
        "field_map": field_map or None,
        "assume_crs": assume_crs,
    }
    if batch_rows is not None:
        if profile_by is not None or map_path is not None:
            raise click.UsageError("--batch-rows streams the output: give it without --profile-by and --map.")
        _screen_streamed(
            sites,
            output,
            batch_rows=batch_rows,
            quiet=quiet,
            overwrite=overwrite,
            profile=profile_path,
            sites_layer=sites_layer,
            sites_where=where,
            disturbed_layer=disturbed_layer,
            disturbed_where=disturbed_where,
            skip_ids=skip_ids,
            engine=_dask(scheduler, workers) if engine == "dask" else None,
            why=why,
            dst_crs=dst_crs,
            **common,
        )
        return
    if profile_by is not None:
        _refuse_with_profile_by(sites_layer, where, disturbed_layer, disturbed_where, map_path)
        _screen_by_municipality(
            sites,
            output,
            profile_by=profile_by,
            name_field=municipality_field,
            skip_ids=skip_ids,
            profile=profile_path,
            overwrite=overwrite,
            quiet=quiet,
            dst_crs=dst_crs,
            **common,
        )
        return
    side = skipped_path(output, layer_tag)
    to_stdout = _check_sidecars(output, side, layer_tag, overwrite=overwrite or update)
    if map_path is not None:
        from esc_gis.maps import check_map_path  # folium loads only when a map is asked for

        check_map_path(map_path, overwrite=overwrite)
    err = Console(stderr=True)
    with progress_bar("{task.description:<40}", quiet=quiet, console=err) as bar:
        task = bar.add_task("screening", total=1.0)
        run = screen_run(
            sites,
            disturbed=disturbed,
            layers=layers_path,
            profile=profile_path,
            id_field=id_field,
            field_map=field_map,
            assume_crs=assume_crs,
            sites_layer=sites_layer,
            disturbed_layer=disturbed_layer,
            sites_where=where,
            disturbed_where=disturbed_where,
            skip_ids=skip_ids,
            progress=lambda stage, frac: bar.update(task, completed=frac, description=stage),
        )
        result = run.result
        bar.update(task, description=f"writing {output}")
        write_layer(
            result, output, overwrite=overwrite, layer=output_layer, update=update, kind="screening", dst_crs=dst_crs
        )
        if to_stdout:
            _stdout_notes(result, run.skipped, quiet=quiet)
            notes: Path | None = None
        else:
            notes = _write_sidecars(run, output, side, layer_tag, overwrite=overwrite or update, dst_crs=dst_crs)
        if map_path is not None:
            bar.update(task, description=f"drawing {map_path}")
            from esc_gis.layers import load_layers
            from esc_gis.maps import overview_map, write_map
            from esc_gis.profile import load_profile

            ls = load_layers(layers_path, profile=load_profile(profile_path))
            write_map(overview_map(result, layers=ls, offline=offline), map_path, overwrite=overwrite)
    if not quiet:
        out = console()
        out.print(summary_table(result, width=out.width))
        for line in disturbed_notes(result):
            out.print(line, markup=False)
        other = findings_lines(result)
        if other:
            out.print("Other findings (codes; the messages are in the output's findings column):")
            for line in other:
                out.print(f"  {line}", markup=False)
        out.print(counts_line(result))
        for line in run_findings_lines(result):
            out.print(line, markup=False)
        for line in input_lines(run, side if len(run.skipped) and not to_stdout else None):
            out.print(line, markup=False)
        wrote = f"Wrote {len(result)} rows to {'standard output' if to_stdout else output}"
        wrote += f", the checks not made to {notes}" if notes else ""
        out.print(wrote + (f" and the map {map_path}" if map_path else ""), markup=False)

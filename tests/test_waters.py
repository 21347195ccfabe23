"""Waters and protective areas: widths by class, clamps, overlaps, lines, class maps, the CLI.

Coordinates are the conftest's local EPSG:7594 feet (US survey feet; L international feet
each); widths are international feet, so a 50 ft strip is 50 / L = 49.9999 ftUS wide.
"""

from __future__ import annotations

import json
import math

import geopandas as gpd
import numpy as np
import pyogrio
import pytest
import shapely
from click.testing import CliRunner

from esc_gis import load_layers, load_profile, screen
from esc_gis.cli.main import cli
from esc_gis.errors import LayerSetError, ValidationError
from esc_gis.protective import protective_layer
from esc_gis.waters import buffer_widths_ft, governing_parts, protective_areas

from .conftest import CRS, X0, Y0, K, L, box, sites, write_layer_set

PROFILE = load_profile()


def waters(rows: list[tuple[str, shapely.Geometry]], **cols) -> gpd.GeoDataFrame:
    data = {"water_class": [c for c, _ in rows], "name": [None] * len(rows), **cols}
    return gpd.GeoDataFrame(data, geometry=[g for _, g in rows], crs=CRS)


def line(*pts: tuple[float, float]) -> shapely.LineString:
    return shapely.LineString([(X0 + x, Y0 + y) for x, y in pts])


def part_at(parts: gpd.GeoDataFrame, x: float, y: float) -> str | None:
    hit = parts[parts.geometry.contains(shapely.Point(X0 + x, Y0 + y))]
    assert len(hit) <= 1
    return None if hit.empty else hit["water_class"].iloc[0]


@pytest.mark.parametrize(
    ("cls", "geom", "width_ft"),
    [
        ("lake", box(0, 0, 100, 100), 50),
        ("perennial_stream", line((0, 0), (100, 0)), 50),
        ("intermittent_stream", line((0, 0), (100, 0)), 50),
        ("wetland", box(0, 0, 100, 100), 50),
        ("wetland_highly_susceptible", box(0, 0, 100, 100), 75),
        ("orw_erw", line((0, 0), (100, 0)), 75),
        ("concentrated_flow_channel", line((0, 0), (100, 0)), 10),
        # Less susceptible: 10 % of the average width 2A/P, clamped to 10..30 ft.
        ("wetland_less_susceptible", box(0, 0, 400, 60), 10),  # 52.2 ftUS -> 5.2 ft -> 10
        ("wetland_less_susceptible", box(0, 0, 2000, 250), 2 * 500_000 / 4_500 * L / 10),  # 22.2 ft
        ("wetland_less_susceptible", box(0, 0, 3000, 1000), 30),  # 750 ftUS -> 75 ft -> 30
    ],
)
def test_width_of_each_class(cls, geom, width_ft):
    assert buffer_widths_ft(waters([(cls, geom)]), PROFILE, load_layers_crs()) == pytest.approx([width_ft], rel=1e-9)


def load_layers_crs():
    from pyproj import CRS as PCRS

    return PCRS(CRS)


def test_greatest_width_wins_where_features_touch():
    # A lake and a highly susceptible wetland side by side, each 100 ftUS square.
    w = waters([("lake", box(0, 0, 100, 100)), ("wetland_highly_susceptible", box(100, 0, 200, 100))])
    parts = governing_parts(w, PROFILE, load_layers_crs())
    assert list(parts["water_class"]) == ["wetland_highly_susceptible", "lake"]  # widest first
    assert list(parts["width_ft"]) == [75.0, 50.0]
    assert part_at(parts, 270, 50) == "wetland_highly_susceptible"  # 70 ft east of the wetland
    assert part_at(parts, 50, 130) == "wetland_highly_susceptible"  # 58 ft from the wetland's corner
    assert part_at(parts, 20, 130) == "lake"  # 85 ft from the wetland, 30 ft from the lake
    assert part_at(parts, -60, 50) is None  # 60 ft west of the lake: outside its 50 ft
    assert part_at(parts, 150, 50) is None  # in the wetland itself: water, not strip
    union = shapely.difference(
        shapely.union_all(shapely.buffer(w.geometry.values, [50 / L, 75 / L])), shapely.union_all(w.geometry.values)
    )
    assert parts["area_sqft"].sum() == pytest.approx(union.area * K, rel=1e-9)
    assert not parts.geometry.iloc[0].intersects(parts.geometry.iloc[1].buffer(-0.01))


def test_a_stream_cannot_get_less_because_it_borders_a_less_susceptible_wetland():
    w = waters([("perennial_stream", line((0, 0), (1000, 0))), ("wetland_less_susceptible", box(0, 0, 1000, 60))])
    parts = governing_parts(w, PROFILE, load_layers_crs())
    assert part_at(parts, 500, -40) == "perennial_stream"  # 40 ft south of the stream: its 50 ft, not 10 ft


def test_centreline_and_channel_width():
    crs = load_layers_crs()
    stream = line((0, 500), (1000, 500))
    bare = governing_parts(waters([("perennial_stream", stream)]), PROFILE, crs)
    # 1,000 ftUS long, 50 ft either side, round ends (a 32-gon, within 0.1 % of a circle).
    assert bare["area_sqft"].iloc[0] == pytest.approx(1000 * L * 100 + math.pi * 50**2, rel=1e-3)
    assert bool(bare["centreline"].iloc[0])
    wide = governing_parts(waters([("perennial_stream", stream)], channel_width_ft=[20.0]), PROFILE, crs)
    # The 20 ft channel is water; the strip runs 50 ft from each bank.
    assert wide["area_sqft"].iloc[0] == pytest.approx(1000 * L * 100 + math.pi * 60**2, rel=1e-3)
    assert not bool(wide["centreline"].iloc[0])


def test_screening_names_centreline_strips_and_measures_channels_as_water(tmp_path):
    w = gpd.GeoDataFrame(
        {
            "water_class": ["perennial_stream", "intermittent_stream"],
            "name": ["Mill Creek", "Ditch"],
            "width_ft": [None, 20.0],
        },
        geometry=[line((100, 300), (900, 300)), line((100, 1300), (900, 1300))],
        crs=CRS,
    )
    manifest = write_layer_set(tmp_path / "l", waters=w)
    manifest.write_text(manifest.read_text() + 'channel_width_field = "width_ft"\n')
    out = screen(
        sites(
            [
                {"site_id": "creek", "geometry": box(400, 320, 440, 360)},  # 20 ft from the centreline
                {"site_id": "ditch", "geometry": box(400, 1305, 440, 1345)},
            ]
        ),  # in the 20 ft channel
        layers=manifest,
    ).set_index("site_id")
    creek = {f["code"]: f for f in json.loads(out.loc["creek", "findings"])}
    assert "protective_area_from_centreline" in creek
    assert creek["protective_area_from_centreline"]["basis"] == "technical_standard"
    assert out.loc["creek", "protective_disturbed_sqft"] == pytest.approx(40 * (300 + 50 / L - 320) * K, rel=1e-6)
    ditch = {f["code"] for f in json.loads(out.loc["ditch", "findings"])}
    assert "protective_area_from_centreline" not in ditch and "in_water_unpermitted" in ditch
    # 1305..1310 ftUS is channel (10 ft = 9.99998 ftUS from the centre), the rest is strip.
    assert out.loc["ditch", "in_water_sqft"] == pytest.approx(40 * (1300 + 10 / L - 1305) * K, rel=1e-5)


def test_unknown_classes_are_listed_with_the_allowed_ones(tmp_path):
    w = waters([("lake", box(0, 0, 9, 9)), ("pond", box(20, 0, 29, 9)), ("river", box(40, 0, 49, 9))])
    manifest = write_layer_set(tmp_path / "l", waters=w)
    with pytest.raises(ValidationError) as exc:
        load_layers(manifest, profile=PROFILE)
    text = str(exc.value)
    assert "row 2" in text and "'pond'" in text and "row 3" in text and "'river'" in text
    assert "wetland_highly_susceptible" in text and "class_map" in text


def test_class_map_from_the_manifest_maps_ignores_and_reports(tmp_path):
    w = gpd.GeoDataFrame(
        {"HYDROCODE": [1, 2, 3, 9]},
        geometry=[box(0, 0, 9, 9), box(20, 0, 29, 9), box(40, 0, 49, 9), box(60, 0, 69, 9)],
        crs=CRS,
    )
    folder = tmp_path / "l"
    manifest = write_layer_set(folder, with_waters=False)
    w.to_file(folder / "hydro.gpkg", engine="pyogrio")
    (folder / "codes.csv").write_text("code,class\n1,lake\n2,wetland\n3,ignore\n")
    manifest.write_text(
        manifest.read_text() + '[waters]\npath = "hydro.gpkg"\nclass_field = "HYDROCODE"\nclass_map = "codes.csv"\n'
    )
    with pytest.raises(ValidationError) as exc:
        load_layers(manifest, profile=PROFILE)
    assert "row 4" in str(exc.value) and "'9'" in str(exc.value) and "not in class_map" in str(exc.value)
    (folder / "codes.csv").write_text("code,class\n1,lake\n2,wetland\n3,ignore\n9,perennial_stream\n")
    ls = load_layers(manifest, profile=PROFILE)
    assert list(ls.waters["water_class"]) == ["lake", "wetland", "perennial_stream"]
    assert list(ls.waters["row"]) == [1, 2, 4]
    (folder / "codes.csv").write_text("1,lake\n2,swamp\n")
    with pytest.raises(ValidationError, match="'swamp', which is not a water class"):
        load_layers(manifest, profile=PROFILE)


def test_several_waters_layers_and_bad_geometry(tmp_path):
    folder = tmp_path / "l"
    manifest = write_layer_set(folder, with_waters=False)
    waters([("lake", box(0, 0, 9, 9))]).to_file(folder / "lakes.gpkg", engine="pyogrio")
    streams = waters(
        [
            ("perennial_stream", line((0, 0), (100, 0))),
            ("wetland_less_susceptible", line((0, 50), (100, 50))),
            ("lake", shapely.Point(X0, Y0)),
        ]
    )
    pyogrio.write_dataframe(streams, folder / "streams.gpkg")
    manifest.write_text(manifest.read_text() + '[[waters]]\npath = "lakes.gpkg"\n[[waters]]\npath = "streams.gpkg"\n')
    with pytest.raises(ValidationError) as exc:
        load_layers(manifest, profile=PROFILE)
    text = str(exc.value)
    assert "streams.gpkg, row 2" in text and "delineated polygon" in text
    assert "streams.gpkg, row 3" in text and "is a Point" in text
    streams.iloc[:1].to_file(folder / "streams.gpkg", engine="pyogrio")
    ls = load_layers(manifest, profile=PROFILE)
    assert list(ls.waters["water_class"]) == ["lake", "perennial_stream"]
    assert ls.waters["layer"].str.endswith(("lakes.gpkg", "streams.gpkg")).all()


def test_missing_class_field_is_a_configuration_error(tmp_path):
    manifest = write_layer_set(tmp_path / "l")
    manifest.write_text(manifest.read_text().replace('class_field = "water_class"', 'class_field = "KIND"'))
    with pytest.raises(LayerSetError, match=r"no field 'KIND'.*water_class"):
        load_layers(manifest, profile=PROFILE)


def test_protective_layer_in_any_input_crs():
    w = waters([("lake", box(0, 0, 100, 100))])
    expected = (200 * 200 - 100 * 100) - (4 * 50**2 - math.pi * 50**2)  # square frame, round corners (ftUS)
    for crs in ("EPSG:4326", "EPSG:3071", CRS):
        out = protective_layer(w.to_crs(crs))
        assert out.crs.to_epsg() == 7594
        assert out["area_sqft"].iloc[0] == pytest.approx(expected * K, rel=2e-3), crs


def test_protective_command(tmp_path):
    src = tmp_path / "hydro.gpkg"
    gpd.GeoDataFrame(
        {"CODE": ["L", "W", "X"], "NAME": ["Pond", "Marsh", "Culvert"]},
        geometry=[box(0, 0, 100, 100), box(100, 0, 200, 100), box(500, 0, 510, 10)],
        crs=CRS,
    ).to_file(src, engine="pyogrio")
    out = tmp_path / "pa.gpkg"
    args = [
        "protective",
        str(src),
        "-o",
        str(out),
        "--class-field",
        "CODE",
        "--class-map",
        "L=lake",
        "--class-map",
        "W=wetland_highly_susceptible",
        "--class-map",
        "X=ignore",
        "--name-field",
        "NAME",
    ]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert "wetland_highly_susceptible" in r.output and "Wrote 2 protective-area part(s)" in r.output
    got = gpd.read_file(out)
    assert list(got["water_class"]) == ["wetland_highly_susceptible", "lake"]
    assert set(got.columns) >= {"width_ft", "section", "area_sqft", "centreline"}
    assert got["section"].str.contains("NR 151.125").all()
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 1 and "--overwrite" in r.output
    r = CliRunner().invoke(cli, ["protective", str(src), "-o", str(tmp_path / "b.gpkg"), "--class-field", "CODE"])
    assert r.exit_code == 1 and "'L' is not a water class" in r.output and "Traceback" not in r.output
    assert all(f"row {k}" in r.output for k in (1, 2, 3))  # every bad row at once


def test_overlap_matches_a_dissolved_reference_with_mixed_overlapping_waters():
    # Lakes, wetlands, streams with and without a channel width, all crossing one another,
    # and parcels over them: the strip and water areas must equal those measured against
    # the dissolved buffers and waters, and every buffer named must meet the dry part.
    rng = np.random.default_rng(7)
    origin = np.array([X0, Y0])
    ponds = shapely.buffer(shapely.points(origin + rng.uniform(0, 1000, (25, 2))), rng.uniform(20, 80, 25))
    walks = origin + rng.uniform(0, 1000, (20, 1, 2)) + np.cumsum(rng.uniform(-60, 60, (20, 6, 2)), axis=1)
    streams = shapely.linestrings(walks)
    classes = (
        ["lake"] * 10
        + ["wetland_highly_susceptible"] * 8
        + ["wetland_less_susceptible"] * 7
        + ["perennial_stream"] * 12
        + ["concentrated_flow_channel"] * 8
    )
    w = gpd.GeoDataFrame(
        {"water_class": classes, "channel_width_ft": [np.nan] * 31 + [20.0] * 6 + [np.nan] * 8},
        geometry=np.r_[ponds, streams],
        crs=CRS,
    )
    lo = origin + rng.uniform(-50, 1000, (3000, 2))
    parcels = shapely.box(*lo.T, *(lo + rng.uniform(10, 60, (3000, 2))).T)
    pa = protective_areas(w, PROFILE, w.crs)
    ov = pa.overlap(parcels)

    water_all = shapely.union_all(pa.water_polygons.pieces)
    strip_all = shapely.difference(shapely.union_all(pa.buffers.pieces), water_all)
    np.testing.assert_allclose(ov.water_area, shapely.area(shapely.intersection(parcels, water_all)), atol=1e-6)
    np.testing.assert_allclose(ov.strip_area, shapely.area(shapely.intersection(parcels, strip_all)), atol=1e-6)
    assert (ov.strip_area > 0).sum() > 300 and (ov.water_area > 0).sum() > 100
    own = {int(k): shapely.union_all(pa.buffers.pieces[pa.buffers.source == k]) for k in np.unique(ov.sources)}
    dry = shapely.difference(parcels[ov.rows], water_all)
    assert shapely.intersects(dry, np.array([own[int(k)] for k in ov.sources])).all()


def test_strip_is_measured_from_the_top_of_channel():
    # A 20 ft channel along y = 0: 10 ft either side is water, the 50 ft strip runs from each
    # bank, so it ends 60 ft from the centre line (not 50 ft, as from a bare centreline).
    # Widths are international feet; coordinates US survey feet (1 ftUS = L ft).
    w = waters([("perennial_stream", line((0, 0), (1000, 0)))], channel_width_ft=[20.0])
    pa = protective_areas(w, PROFILE, w.crs)
    site = box(400, 0, 440, 100)  # 40 ftUS wide, from the centre line outwards
    ov = pa.overlap(np.array([site]))
    assert ov.water_area[0] == pytest.approx(40 * 10 / L, rel=1e-9)  # centre to bank
    assert ov.strip_area[0] == pytest.approx(40 * 50 / L, rel=1e-9)  # bank to 50 ft beyond it
    assert not pa.centreline[0]
    parts = governing_parts(w, PROFILE, load_layers_crs())
    assert part_at(parts, 500, 58) == "perennial_stream"  # 48 ft from the bank
    assert part_at(parts, 500, 62) is None  # 52 ft from the bank
    assert part_at(parts, 500, 5) is None  # in the channel: water, not strip
    bare = governing_parts(waters([("perennial_stream", line((0, 0), (1000, 0)))]), PROFILE, load_layers_crs())
    assert part_at(bare, 500, 58) is None  # the centreline approximation stops at 50 ft


def test_piped_stream_has_no_strip_but_is_still_a_water():
    w = waters(
        [("perennial_stream", line((0, 0), (1000, 0))), ("perennial_stream", line((0, 500), (1000, 500)))],
        channel_width_ft=[20.0, np.nan],
        piped=[True, False],
    )
    pa = protective_areas(w, PROFILE, w.crs)
    assert pa.piped.tolist() == [True, False] and pa.widths_ft.tolist() == [0.0, 50.0]
    sites_ = np.array([box(400, 0, 440, 30), box(400, 520, 440, 540)])
    ov = pa.overlap(sites_)
    # Over the culvert: neither strip nor water (the land above a pipe is land) ...
    assert ov.strip_area[0] == 0 and ov.water_area[0] == 0 and 0 not in ov.rows
    assert ov.strip_area[1] == pytest.approx(40 * 20, rel=1e-9)
    # ... but the piped stream is still the nearest water of the state.
    from esc_gis.measure import nearest_distance

    d, j = nearest_distance(sites_, pa.nearest)
    assert d[0] == 0 and pa.nearest_source[j[0]] == 0
    parts = governing_parts(w, PROFILE, load_layers_crs())
    assert len(parts) == 1 and part_at(parts, 500, 30) is None and part_at(parts, 500, 530) == "perennial_stream"


@pytest.mark.parametrize(
    ("acres", "strip", "unverified"),
    [(200.0, True, False), (130.0, False, False), (130.5, True, False), (np.nan, True, True)],
)
def test_concentrated_flow_channel_only_above_130_acres(acres, strip, unverified):
    assert PROFILE.entry("protective_area.concentrated_flow_channel").extra["min_drainage_acres"] == 130
    w = waters([("concentrated_flow_channel", line((0, 0), (1000, 0)))], drainage_acres=[acres])
    pa = protective_areas(w, PROFILE, w.crs)
    ov = pa.overlap(np.array([box(400, 0, 440, 100)]))
    assert ov.strip_area[0] == (pytest.approx(40 * 10 / L, rel=1e-9) if strip else 0)
    assert pa.channel_class_unverified.tolist() == [unverified]
    assert pa.small_channel.tolist() == [not strip]
    assert len(pa.nearest_source) > 0  # a water either way
    parts = governing_parts(w, PROFILE, load_layers_crs())
    assert len(parts) == int(strip)
    if strip:
        assert parts["channel_class_unverified"].tolist() == [unverified]


def test_drainage_only_matters_for_classes_with_a_minimum():
    w = waters([("perennial_stream", line((0, 0), (1000, 0)))], drainage_acres=[5.0])
    pa = protective_areas(w, PROFILE, w.crs)
    assert pa.widths_ft.tolist() == [50.0] and not pa.channel_class_unverified[0] and not pa.small_channel[0]


def test_piped_and_drainage_fields_in_a_layer_set(tmp_path):
    w = gpd.GeoDataFrame(
        {
            "water_class": ["perennial_stream", "concentrated_flow_channel", "concentrated_flow_channel"],
            "name": ["Culverted creek", "Swale", "Ditch"],
            "piped": ["yes", None, "0"],
            "drainage_acres": [None, 40.0, None],
        },
        geometry=[line((0, 0), (1000, 0)), line((0, 300), (1000, 300)), line((0, 600), (1000, 600))],
        crs=CRS,
    )
    ls = load_layers(write_layer_set(tmp_path / "l", waters=w), profile=PROFILE)
    assert ls.waters["piped"].tolist() == [True, False, False]
    np.testing.assert_array_equal(ls.waters["drainage_acres"].to_numpy(), [np.nan, 40.0, np.nan])
    pa = protective_areas(ls.waters, PROFILE, ls.crs)
    assert pa.widths_ft.tolist() == [0.0, 0.0, 10.0]
    assert pa.channel_class_unverified.tolist() == [False, False, True]
    # Layers without the columns read as before: nothing piped, no drainage areas.
    plain = load_layers(write_layer_set(tmp_path / "p"), profile=PROFILE).waters
    assert not plain["piped"].any() and plain["drainage_acres"].isna().all()


def test_bad_piped_and_drainage_values_are_listed(tmp_path):
    w = gpd.GeoDataFrame(
        {
            "water_class": ["perennial_stream", "concentrated_flow_channel"],
            "name": ["a", "b"],
            "culvert": ["maybe", "no"],
            "drainage_acres": ["40", "lots"],
        },
        geometry=[line((0, 0), (100, 0)), line((0, 300), (100, 300))],
        crs=CRS,
    )
    manifest = write_layer_set(tmp_path / "l", waters=w)
    with pytest.raises(LayerSetError, match=r"no field 'pipe' for piped_field"):
        manifest.write_text(manifest.read_text() + 'piped_field = "pipe"\n')
        load_layers(manifest, profile=PROFILE)
    manifest.write_text(manifest.read_text().replace('piped_field = "pipe"', 'piped_field = "culvert"'))
    with pytest.raises(ValidationError) as exc:
        load_layers(manifest, profile=PROFILE)
    text = str(exc.value)
    assert "row 1" in text and "culvert 'maybe' is not true or false" in text
    assert "row 2" in text and "drainage_acres 'lots' is not a drainage area" in text


def test_protective_command_reads_piped_and_drainage(tmp_path):
    src = tmp_path / "hydro.gpkg"
    gpd.GeoDataFrame(
        {
            "water_class": ["perennial_stream", "concentrated_flow_channel", "concentrated_flow_channel"],
            "in_pipe": [1, 0, 0],
            "drainage_acres": [None, 500.0, None],
        },
        geometry=[line((0, 0), (1000, 0)), line((0, 300), (1000, 300)), line((0, 900), (1000, 900))],
        crs=CRS,
    ).to_file(src, engine="pyogrio")
    out = tmp_path / "pa.gpkg"
    r = CliRunner().invoke(cli, ["protective", str(src), "-o", str(out), "--piped-field", "in_pipe"])
    assert r.exit_code == 0, r.output
    got = gpd.read_file(out)
    assert got["water_class"].tolist() == ["concentrated_flow_channel"]  # the piped stream has none
    assert got["channel_class_unverified"].tolist() == [True]
    assert "class taken as given" in r.output


def test_piped_flags_written_as_text_are_read_as_such():
    w = waters([("perennial_stream", line((0, 0), (100, 0)))] * 3, piped=["no", "yes", None])
    assert protective_areas(w, PROFILE, w.crs).piped.tolist() == [False, True, False]


def test_protective_outputs_declare_one_geometry_type_in_every_format(tmp_path):
    """A part in one piece (the pond's frame) and one in two (two streams' strips) are both MultiPolygon:
    GDAL declared a GeoJSON mixing Polygon and MultiPolygon "Unknown (any)"; each format now says one type."""
    import subprocess

    from .conftest import require_tool

    w = waters(
        [
            ("lake", box(0, 0, 100, 100)),
            ("perennial_stream", line((1000, 0), (1000, 300))),
            ("perennial_stream", line((1500, 0), (1500, 300))),
        ]
    )
    parts = governing_parts(w, PROFILE, w.crs)
    assert set(parts.geom_type) == {"MultiPolygon"}
    assert sorted(len(g.geoms) for g in parts.geometry) == [1, 2]  # the pond's frame, the two strips
    src = tmp_path / "hydro.gpkg"
    w.to_file(src, engine="pyogrio")
    ogrinfo = require_tool("ogrinfo", "gdal-bin")
    for ext in ("gpkg", "geojson", "parquet"):
        out = tmp_path / f"pa.{ext}"
        for extra in ([], ["--overwrite"]):  # written twice: the second replaces the first alike
            r = CliRunner().invoke(cli, ["protective", str(src), "-o", str(out), "-q", *extra])
            assert r.exit_code == 0, r.output
            got = gpd.read_parquet(out) if ext == "parquet" else gpd.read_file(out)
            assert set(got.geom_type) == {"MultiPolygon"} and len(got) == 2, ext
        if ext == "parquet":  # Debian's GDAL 3.6 has no Parquet driver: GeoParquet's own metadata
            import pyarrow.parquet as pq

            geo = json.loads(pq.read_schema(out).metadata[b"geo"])
            assert geo["columns"][geo["primary_column"]]["geometry_types"] == ["MultiPolygon"]
            continue
        info = subprocess.run([ogrinfo, "-ro", "-so", "-al", str(out)], capture_output=True, text=True, check=True)
        layer = info.stdout.split("Layer name: protective_areas", 1)[1]
        assert "Geometry: Multi Polygon\n" in layer, info.stdout
        assert "Unknown" not in layer

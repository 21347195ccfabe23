"""``--profile-by``: each site decided under the ordinance of the municipality it lies in.

Two municipalities side by side, built in code: Westville (the test Village's west half) under
the Village of Winneconne's profile (a permit from 4,000 sq ft, § 540-4A(1)(a)) and Eastville
(the east half) under the Town of Example's test profile (from 2,000 sq ft, § 23-4A(1)(a)).
A 3,000 sq ft site needs no permit in the west and one in the east.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import geopandas as gpd
import pytest
import shapely

from esc_gis.errors import CRSError, EscGisWarning, LayerSetError, ValidationError
from esc_gis.profile import load_profile
from esc_gis.screening import screen
from esc_gis.screening.municipalities import NOT_COVERED, parse_profile_by, screen_by_municipality

from .conftest import CRS, box, square_sqft
from .test_stream import screen_cli

EXAMPLE = Path(__file__).parent / "profiles" / "example.toml"


@pytest.fixture
def munis(tmp_path: Path) -> Path:
    """Westville (x < 1000) and Eastville (x >= 1000), the profile named by a bundled name and a path."""
    shutil.copy(EXAMPLE, tmp_path / "eastville.toml")
    west, east = box(0, 0, 1000, 2000), box(1000, 0, 2000, 2000)
    gdf = gpd.GeoDataFrame(
        {"name": ["Westville", "Eastville"], "profile": ["winneconne", "eastville.toml"]},
        geometry=[west, east],
        crs=CRS,
    )
    path = tmp_path / "munis.gpkg"
    gdf.to_file(path)
    return path


def _sites() -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {"site_id": ["west", "east", "straddle", "away"]},
        geometry=[
            square_sqft(200, 200, 3000.0),
            square_sqft(1400, 200, 3000.0),
            shapely.box(*box(1000 - 27.386, 600, 1000 + 27.386, 600 + 54.772).bounds),  # 3,000 sq ft, half each
            square_sqft(5000, 5000, 3000.0),
        ],
        crs=CRS,
    )


def test_each_site_is_decided_under_its_own_municipalitys_profile(munis, layer_set):
    """§ 540-4A(1)(a) "4,000 square feet or greater" in Westville; § 23-4A(1)(a) 2,000 in Eastville."""
    out = screen_by_municipality(_sites(), profile_by=f"{munis}:profile", layers=layer_set)
    rows = {(r.site_id, r.municipality): r for r in out.itertuples()}
    assert list(out["site_id"]) == ["west", "east", "straddle", "straddle", "away"]
    assert rows["west", "winneconne"].permit == "not_required"
    assert rows["west", "winneconne"].profile == "Village of Winneconne"
    assert rows["east", "eastville.toml"].permit == "required"
    assert rows["east", "eastville.toml"].profile == "Town of Example"
    sections = {f["section"] for f in json.loads(rows["east", "eastville.toml"].findings)}
    assert "§ 23-4A(1)(a)" in sections and not any("540" in s for s in sections)


def test_a_straddling_site_follows_each_profiles_partial_reading(munis, layer_set):
    """§ 540-4B: the article applies to "construction sites located within the boundaries and
    jurisdiction of the Village", and is silent on a site partly inside: each profile's reading
    decides (the "whole" reading: the whole disturbance, in each municipality)."""
    out = screen_by_municipality(_sites(), profile_by=f"{munis}:profile", layers=layer_set)
    straddle = out[out["site_id"] == "straddle"].set_index("municipality")
    assert list(straddle["jurisdiction"]) == ["partial", "partial"]
    assert straddle.loc["winneconne", "permit"] == "not_required"  # 3,000 < 4,000
    assert straddle.loc["eastville.toml", "permit"] == "required"  # 3,000 >= 2,000
    assert straddle.loc["winneconne", "disturbed_in_village_sqft"] == pytest.approx(1500.0, rel=1e-3)


def test_a_site_outside_every_municipality_is_not_covered_never_decided(munis, layer_set):
    """§ 540-4B reaches only sites "located within the boundaries and jurisdiction of the Village":
    a site in no municipality is decided under no ordinance, and its finding cites none."""
    out = screen_by_municipality(_sites(), profile_by=f"{munis}:profile", layers=layer_set)
    away = out[out["site_id"] == "away"].iloc[0]
    assert away["permit"] == away["jurisdiction"] == NOT_COVERED
    assert away["municipality"] is None and away["profile"] is None
    assert [f["code"] for f in json.loads(away["findings"])] == ["not_covered"]


def test_rows_equal_screening_each_municipality_alone(munis, layer_set):
    """The same engine: a municipality's rows are what screening its sites alone under its profile gives."""
    out = screen_by_municipality(_sites(), profile_by=f"{munis}:profile", layers=layer_set)
    west = gpd.read_file(munis).iloc[0].geometry
    alone = screen(_sites().iloc[[0, 2]], layers=replace(layer_set, jurisdiction=west), profile=load_profile())
    mine = out[out["municipality"] == "winneconne"].reset_index(drop=True)
    for col in ("permit", "jurisdiction", "disturbed_sqft", "disturbed_in_village_sqft", "findings"):
        assert list(mine[col]) == list(alone[col])


def test_bad_jurisdictions_layers_say_what_to_fix(munis, layer_set, tmp_path):
    with pytest.raises(LayerSetError, match="no field 'profil' naming the profiles; its fields: name, profile"):
        screen_by_municipality(_sites(), profile_by=f"{munis}:profil", layers=layer_set)
    bad = gpd.read_file(munis)
    bad.loc[0, "profile"] = "nowhere.toml"
    bad.loc[1, "profile"] = None
    bad.to_file(tmp_path / "bad.gpkg")
    with pytest.raises(ValidationError) as err:
        screen_by_municipality(_sites(), profile_by=f"{tmp_path / 'bad.gpkg'}:profile", layers=layer_set)
    text = str(err.value)
    assert "row 2: names no profile" in text and "no profile 'nowhere.toml'" in text
    with pytest.raises(LayerSetError, match="is not LAYER:FIELD"):
        parse_profile_by("munis.gpkg")


def test_cli_profile_by(munis, layers_path, tmp_path):
    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    out = tmp_path / "out.gpkg"
    res = screen_cli(src, layers_path, out, "--profile-by", f"{munis}:profile", "-q")
    assert res.exit_code == 0, res.output
    got = gpd.read_file(out)
    assert list(got["site_id"]) == ["west", "east", "straddle", "straddle", "away"]
    # A site across two: one row per municipality, in the order of their names.
    assert list(got["municipality"].fillna("")) == ["winneconne", "eastville.toml", "eastville.toml", "winneconne", ""]
    assert list(got["permit"]) == ["not_required", "required", "required", "not_required", NOT_COVERED]
    # The waters are the layer set's given (its river), not the bundled set's.
    alone = screen(_sites().iloc[[0]], layers=layers_path)
    assert got["nearest_water_ft"].iloc[0] == pytest.approx(alone["nearest_water_ft"].iloc[0])
    assert got["nearest_water"].iloc[0] == alone["nearest_water"].iloc[0]


def test_a_common_plan_across_two_municipalities_is_added_up_whole(munis, layer_set):
    """§ 540-5: a construction site includes "areas that are part of a larger common plan of
    development": a plan's site in Westville is decided on the whole plan, its other site in
    Eastville included (each municipality decides only its own site)."""
    sites = gpd.GeoDataFrame(
        {"site_id": ["w", "e"], "plan_id": ["P1", "P1"]},
        geometry=[square_sqft(200, 200, 3000.0), square_sqft(1400, 200, 3000.0)],
        crs=CRS,
    )
    out = screen_by_municipality(sites, profile_by=f"{munis}:profile", layers=layer_set)
    assert list(zip(out["site_id"], out["municipality"], strict=True)) == [("w", "winneconne"), ("e", "eastville.toml")]
    west = out.iloc[0]
    assert west["plan_disturbed_sqft"] == pytest.approx(6000.0, rel=1e-4)  # 3,000 alone would need no permit
    assert west["permit"] == "required"


def test_the_disturbance_places_a_site_not_its_parcel(munis, layer_set):
    """§ 540-4B: the article "applies to land-disturbing construction activity on construction sites":
    a parcel across the line whose disturbed limits lie all in Westville is Westville's alone."""
    parcel = gpd.GeoDataFrame({"site_id": ["p"]}, geometry=[box(900, 100, 1100, 300)], crs=CRS)
    limits = gpd.GeoDataFrame({"site_id": ["p"]}, geometry=[box(910, 110, 990, 290)], crs=CRS)
    out = screen_by_municipality(parcel, disturbed=limits, profile_by=f"{munis}:profile", layers=layer_set)
    assert list(out["municipality"]) == ["winneconne"] and list(out["jurisdiction"]) == ["inside"]


def test_a_straddling_sites_finding_says_the_article_stops_at_the_line(munis, layer_set):
    # § 540-4B: "This article applies to ... construction sites located within the boundaries and
    # jurisdiction of the Village"; it says nothing of who governs the part outside.
    out = screen_by_municipality(_sites(), profile_by=f"{munis}:profile", layers=layer_set)
    straddle = out[out["site_id"] == "straddle"].iloc[0]
    partial = next(f for f in json.loads(straddle["findings"]) if f["code"] == "jurisdiction_partial")
    assert partial["basis"] == "interpretation" and "confines this article" in partial["message"]


def test_options_profile_by_does_not_take_are_refused_not_ignored(munis, layers_path, tmp_path):
    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    res = screen_cli(src, layers_path, tmp_path / "o.gpkg", "--profile-by", f"{munis}:profile", "--where", "1=1")
    assert res.exit_code == 2 and "--profile-by does not take --where yet" in res.output


def test_files_in_other_crss_with_their_own_id_field_and_a_named_layer(munis, layers_path, tmp_path):
    """What counties ship: sites and limits as files in WTM metres (EPSG:3071) with a PID field, and a
    multi-layer jurisdictions file: the same decisions as the GeoDataFrames in the measuring CRS."""
    sites = _sites().rename(columns={"site_id": "PID"}).to_crs("EPSG:3071")
    sites.to_file(tmp_path / "sites.gpkg")
    limits = gpd.GeoDataFrame({"PID": ["east"]}, geometry=[square_sqft(1400, 200, 2500.0)], crs=CRS).to_crs("EPSG:3071")
    limits.to_file(tmp_path / "limits.gpkg")
    gpd.read_file(munis).to_file(tmp_path / "two.gpkg", layer="places")
    gpd.GeoDataFrame({"x": [1]}, geometry=[box(0, 0, 1, 1)], crs=CRS).to_file(tmp_path / "two.gpkg", layer="other")
    shutil.copy(EXAMPLE, tmp_path / "eastville.toml")
    with pytest.warns(EscGisWarning, match=r"no polygon for 3 site\(s\): west, straddle, away\."):
        out = screen_by_municipality(
            tmp_path / "sites.gpkg",
            disturbed=tmp_path / "limits.gpkg",
            profile_by=f"{tmp_path / 'two.gpkg'}|places:profile",
            layers=layers_path,
            id_field="PID",
        )
    assert list(out["site_id"]) == ["west", "east", "straddle", "straddle", "away"]
    # A disturbed-limits layer names only "east": the others are taken whole (3,000 sq ft each, issue 46),
    # in both municipalities: under Eastville's 2,000 sq ft the straddling site needs a permit, under 4,000 not.
    assert list(out["permit"]) == ["not_required", "required", "required", "not_required", NOT_COVERED]
    assert out["disturbed_sqft"].iloc[[0, 2, 3]].tolist() == pytest.approx([3000.0] * 3, rel=1e-4)
    assert list(out["municipality"].iloc[[2, 3]]) == ["eastville.toml", "winneconne"]
    east = out.iloc[1]
    assert east["disturbed_sqft"] == pytest.approx(2500.0, rel=1e-4)  # the limits, not the parcel
    assert out.crs == CRS and out.geometry.name == "geometry" and list(out.index) == list(range(5))
    away = out.iloc[4]
    assert away["applicability"] == NOT_COVERED and away["site_id"] == "away"
    # The not-covered words are the run's first profile's, by name: eastville.toml's.
    assert "Town of Example's test wording" in json.loads(away["findings"])[0]["message"]


@pytest.mark.parametrize(
    ("text", "path", "field", "layer"),
    [
        ("a/m.gpkg:profile", "a/m.gpkg", "profile", None),
        ("C:/x:y/m.gpkg|places: profile ", "C:/x:y/m.gpkg", "profile", "places"),
    ],
)
def test_parse_profile_by(text, path, field, layer):
    by = parse_profile_by(text)
    assert (by.path.as_posix(), by.field, by.layer) == (path, field, layer)


@pytest.mark.parametrize("text", ["m.gpkg", "m.gpkg:", "m.gpkg:  ", ":profile"])
def test_parse_profile_by_refuses(text):
    with pytest.raises(LayerSetError, match="is not LAYER:FIELD"):
        parse_profile_by(text)


def test_a_blank_profile_name_is_a_problem_of_its_row(munis, layer_set, tmp_path):
    bad = gpd.read_file(munis)
    bad.loc[1, "profile"] = "  "
    bad.to_file(tmp_path / "blank.gpkg")
    with pytest.raises(ValidationError) as err:
        screen_by_municipality(_sites(), profile_by=f"{tmp_path / 'blank.gpkg'}:profile", layers=layer_set)
    (problem,) = err.value.problems
    assert (problem.source, problem.row, problem.fix) == (
        str(tmp_path / "blank.gpkg"),
        2,
        "give the profile, or drop the feature.",
    )


def test_plans_by_a_mapped_field_and_blank_plan_ids(munis, layer_set):
    """--field plan_id=PROJ names the plan; a blank plan id is no plan (it joins nothing)."""
    sites = gpd.GeoDataFrame(
        {"site_id": ["w", "e", "w2", "e2"], "PROJ": ["P1", "P1", "", ""]},
        geometry=[
            square_sqft(200, 200, 3000.0),
            square_sqft(1400, 200, 3000.0),
            square_sqft(200, 600, 3000.0),
            square_sqft(1400, 600, 3000.0),
        ],
        crs=CRS,
    )
    out = screen_by_municipality(
        sites, profile_by=f"{munis}:profile", layers=layer_set, field_map={"plan_id": "PROJ"}
    ).set_index("site_id")
    assert out.loc["w", "plan_disturbed_sqft"] == pytest.approx(6000.0, rel=1e-4)
    assert out.loc["w2", "plan_disturbed_sqft"] == pytest.approx(3000.0, rel=1e-4)
    assert out.loc["w2", "permit"] == "not_required"


def _one_profile_twice(tmp_path: Path, names: list[str | None], profiles: list[str]) -> Path:
    """The two halves again, with the names and profiles given."""
    shutil.copy(EXAMPLE, tmp_path / "eastville.toml")
    gdf = gpd.GeoDataFrame(
        {"name": names, "profile": profiles}, geometry=[box(0, 0, 1000, 2000), box(1000, 0, 2000, 2000)], crs=CRS
    )
    path = tmp_path / "twins.gpkg"
    gdf.to_file(path)
    return path


def test_one_profile_is_one_municipality_whatever_its_features(layer_set, tmp_path):
    """§ 540-4B: the article applies to sites "located within the boundaries and jurisdiction of the
    Village of Winneconne"; a profile is that one municipality's ordinance (its name, sections and
    officers), so a village stored as two features is one jurisdiction, and a site across the
    inner line lies wholly inside it, whether the features are named or not, and whichever
    way the field names the profile (a bundled name, or its file)."""
    parts = _one_profile_twice(tmp_path, ["Winneconne", " Winneconne "], ["winneconne", "winneconne.toml"])
    for name_field, label in ((None, "winneconne"), ("name", "Winneconne")):
        out = screen_by_municipality(_sites(), profile_by=f"{parts}:profile", layers=layer_set, name_field=name_field)
        straddle = out[out["site_id"] == "straddle"]
        assert list(straddle["municipality"]) == [label] and list(straddle["jurisdiction"]) == ["inside"]
        assert straddle["disturbed_in_village_sqft"].iloc[0] == pytest.approx(3000.0, rel=1e-3)
        assert not any(f["code"].startswith("jurisdiction_partial") for f in json.loads(straddle["findings"].iloc[0]))


def test_named_municipalities_must_match_their_profiles_one_to_one(layer_set, tmp_path):
    """A profile's findings name its municipality ("outside the Village of Winneconne"): two
    municipalities under one profile would each be told they are the Village; refused."""
    twins = _one_profile_twice(tmp_path, ["Westville", "Eastville"], ["winneconne", "winneconne"])
    with pytest.raises(ValidationError) as err:
        screen_by_municipality(_sites(), profile_by=f"{twins}:profile", layers=layer_set, name_field="name")
    assert "profile 'winneconne' (rows 1, 2) is named by the municipalities 'Eastville', 'Westville'" in str(err.value)
    assert "copy it for each" in str(err.value)
    mixed = _one_profile_twice(tmp_path, ["Winneconne", "Winneconne"], ["winneconne", "eastville.toml"])
    with pytest.raises(ValidationError) as err:
        screen_by_municipality(_sites(), profile_by=f"{mixed}:profile", layers=layer_set, name_field="name")
    assert "municipality 'Winneconne' (rows 1, 2) names the profiles 'eastville.toml', 'winneconne'" in str(err.value)
    blank = _one_profile_twice(tmp_path, [None, "Eastville"], ["winneconne", "eastville.toml"])
    with pytest.raises(ValidationError, match="row 1: has no name"):
        screen_by_municipality(_sites(), profile_by=f"{blank}:profile", layers=layer_set, name_field="name")
    with pytest.raises(LayerSetError, match="no field 'NAME' naming the municipalities; its fields: name, profile"):
        screen_by_municipality(_sites(), profile_by=f"{blank}:profile", layers=layer_set, name_field="NAME")
    # Named one to one: the rows say the names.
    good = _one_profile_twice(tmp_path, ["Westville", "Eastville"], ["winneconne", "eastville.toml"])
    out = screen_by_municipality(_sites(), profile_by=f"{good}:profile", layers=layer_set, name_field="name")
    assert list(out.loc[out["site_id"] == "straddle", "municipality"]) == ["Eastville", "Westville"]


def test_municipalities_overlapping_by_more_than_a_sliver_are_refused(layer_set, tmp_path):
    """Land lies in one municipality: a site in the overlap would be decided under both laws."""
    shutil.copy(EXAMPLE, tmp_path / "eastville.toml")
    for overlap_ft, refused in ((0.0, False), (1.0, True)):  # 1 ft by 2,000 ft: 2,000 sq ft, over the 1 sq ft sliver
        gdf = gpd.GeoDataFrame(
            {"profile": ["winneconne", "eastville.toml"]},
            geometry=[box(0, 0, 1000 + overlap_ft, 2000), box(1000, 0, 2000, 2000)],
            crs=CRS,
        )
        gdf.to_file(tmp_path / "m.gpkg")
        if refused:
            with pytest.raises(ValidationError, match=r"'eastville\.toml' and 'winneconne' overlap by 2,000\.0 sq ft"):
                screen_by_municipality(_sites(), profile_by=f"{tmp_path / 'm.gpkg'}:profile", layers=layer_set)
        else:
            assert len(screen_by_municipality(_sites(), profile_by=f"{tmp_path / 'm.gpkg'}:profile", layers=layer_set))


def test_sites_are_read_as_the_engine_reads_them(munis, layer_set, tmp_path):
    """The same reading as one municipality's screening: a site without a CRS under --assume-crs, an id
    field in another case matching the limits', and a V10 layer's rights of way skipped, not a crash."""
    bare = _sites().set_crs(None, allow_override=True)
    out = screen_by_municipality(bare, profile_by=f"{munis}:profile", layers=layer_set, assume_crs=CRS)
    assert out.set_index("site_id").loc["west", "jurisdiction"] == "inside"
    sites = _sites().rename(columns={"site_id": "SITE_ID"})
    limits = gpd.GeoDataFrame({"SITE_ID": ["west"]}, geometry=[square_sqft(200, 200, 1000.0)], crs=CRS)
    with pytest.warns(EscGisWarning, match=r"no polygon for 3 site\(s\): east, straddle, away\."):
        out = screen_by_municipality(sites, disturbed=limits, profile_by=f"{munis}:profile", layers=layer_set)
    assert out.set_index("site_id").loc["west", "disturbed_sqft"] == pytest.approx(1000.0, rel=1e-4)
    v10 = _sites().rename(columns={"site_id": "PARCELID"})
    v10.loc[1, "PARCELID"] = "ROW"
    out = screen_by_municipality(v10, profile_by=f"{munis}:profile", layers=layer_set, id_field="PARCELID")
    assert "ROW" not in set(out["site_id"]) and list(out.attrs["skipped"]["feature"]) == [2]
    assert list(out["site_id"]) == ["west", "straddle", "straddle", "away"]
    # A shapefile without its .prj: no CRS.
    gpd.read_file(munis).to_file(tmp_path / "bare.shp")
    (tmp_path / "bare.prj").unlink()
    with pytest.raises(CRSError, match="has no CRS; define it"):
        screen_by_municipality(_sites(), profile_by=f"{tmp_path / 'bare.shp'}:profile", layers=layer_set)


def test_cli_municipality_field_and_sidecars(layers_path, tmp_path):
    src = tmp_path / "sites.gpkg"
    v10 = _sites().rename(columns={"site_id": "PARCELID"})
    v10.loc[1, "PARCELID"] = "ROW"
    v10.to_file(src)
    good = _one_profile_twice(tmp_path, ["Westville", "Eastville"], ["winneconne", "eastville.toml"])
    out = tmp_path / "out.gpkg"
    by = ["--profile-by", f"{good}:profile", "--id-field", "PARCELID"]
    res = screen_cli(src, layers_path, out, *by, "--municipality-field", "name", "-q")
    assert res.exit_code == 0, res.output
    got = gpd.read_file(out)
    assert list(got["municipality"].fillna("")) == ["Westville", "Eastville", "Westville", ""]
    # The rights of way skipped are listed beside the output, as a plain screening lists them.
    assert list(gpd.read_file(tmp_path / "out.gpkg.skipped.gpkg")["feature"]) == [2]
    res = screen_cli(src, layers_path, tmp_path / "o2.gpkg", "--municipality-field", "name")
    assert res.exit_code == 2 and "--municipality-field goes with --profile-by" in res.output
    res = screen_cli(src, layers_path, tmp_path / "o3.gpkg", *by, "--engine", "dask")
    assert res.exit_code == 2 and "--profile-by runs in one process" in res.output


def test_profiles_that_disagree_on_the_shared_layer_set_are_refused(munis, layers_path, tmp_path):
    """The layer set is loaded once: a municipality measured in another's CRS could cross the
    one-acre line on the CRS alone (§ 540-7B(3)(b) "one acre or more"), so profiles must agree."""
    text = (tmp_path / "eastville.toml").read_text()
    (tmp_path / "eastville.toml").write_text(text.replace('measure_crs = "EPSG:7594"', 'measure_crs = "EPSG:3071"', 1))
    with pytest.raises(ValidationError, match=r"differ in measure_crs \('eastville\.toml': EPSG:3071; 'winneconne'"):
        screen_by_municipality(_sites(), profile_by=f"{munis}:profile", layers=layers_path)
    # The sliver too: a site a sliver over the line would be "partly outside" on one side only.
    start = text.index("[policy.sliver]")
    (tmp_path / "eastville.toml").write_text(text[:start] + text[start:].replace("value = 1", "value = 5", 1))
    with pytest.raises(
        ValidationError, match=r"differ in policy\.sliver \('eastville\.toml': 5 sq ft; 'winneconne': 1"
    ):
        screen_by_municipality(_sites(), profile_by=f"{munis}:profile", layers=layers_path)


@pytest.mark.parametrize(("plan_sqft", "permit"), [(4000.0, "required"), (3999.0, "not_required")])
def test_a_plan_across_the_line_at_the_permit_line(munis, layer_set, plan_sqft, permit):
    """§ 540-4A(1)(a): "A construction site with 4,000 square feet or greater of land-disturbing
    construction activity"; § 540-5: the site includes "areas that are part of a larger common
    plan of development": Westville's half of a plan across the line decides on the whole plan."""
    half = plan_sqft / 2
    sites = gpd.GeoDataFrame(
        {"site_id": ["w", "e"], "plan_id": ["P1", "P1"]},
        geometry=[square_sqft(200, 200, half), square_sqft(1400, 200, half)],
        crs=CRS,
    )
    out = screen_by_municipality(sites, profile_by=f"{munis}:profile", layers=layer_set).set_index("site_id")
    assert out.loc["w", "municipality"] == "winneconne"
    assert out.loc["w", "plan_disturbed_sqft"] == pytest.approx(plan_sqft, abs=1e-6)
    assert out.loc["w", "permit"] == permit


@pytest.mark.parametrize(("over_sqft", "rows"), [(1.0, 1), (1.5, 2)])
def test_a_sliver_across_the_line_is_no_touch(munis, layer_set, over_sqft, rows):
    """The profile's sliver policy (1 sq ft): a site reaching 1 sq ft into Eastville is Westville's
    alone, inside it, with no partial finding; 1.5 sq ft makes it a site of both."""
    from .conftest import K

    depth = over_sqft / K / 100.0  # a 100 ft long strip over the line, in US survey feet
    site = gpd.GeoDataFrame({"site_id": ["s"]}, geometry=[box(900, 100, 1000 + depth, 200)], crs=CRS)
    out = screen_by_municipality(site, profile_by=f"{munis}:profile", layers=layer_set)
    assert len(out) == rows
    west = out[out["municipality"] == "winneconne"].iloc[0]
    assert west["jurisdiction"] == ("inside" if rows == 1 else "partial")
    codes = {f["code"] for f in json.loads(west["findings"])}
    assert ("jurisdiction_partial" in codes) == (rows == 2)


def test_each_refusal_names_the_layer_and_its_fix(munis, layer_set, layers_path, tmp_path):
    """Every problem names the jurisdictions layer and says what to do, as every input problem does."""
    source = str(munis)
    east = tmp_path / "eastville.toml"
    text = east.read_text()

    def problems(**kw):
        with pytest.raises(ValidationError) as err:
            screen_by_municipality(_sites(), **kw)
        return err.value.problems

    # The soils' K field and the water classes, each loaded once for every municipality.
    east.write_text(text.replace('k_field = "kwfact"', 'k_field = "KFACT"', 1))
    (p,) = problems(profile_by=f"{munis}:profile", layers=layers_path)
    assert (p.source, p.row) == (source, None)
    assert p.message.startswith(
        "the profiles differ in soil_loss k_field ('eastville.toml': KFACT; 'winneconne': kwfact)"
    )
    assert p.fix == "give them one value, or screen each municipality apart."
    start = text.index("[protective_area.lake]")
    lake = text[start : text.index("\n[", start) + 1]
    east.write_text(text.replace(lake, lake + "\n" + lake.replace("protective_area.lake", "protective_area.pond"), 1))
    (p,) = problems(profile_by=f"{munis}:profile", layers=layers_path)
    assert p.message.startswith("the profiles differ in water classes ('eastville.toml': ")
    east.write_text(text)
    # Overlaps.
    gdf = gpd.GeoDataFrame(
        {"profile": ["winneconne", "eastville.toml"], "name": ["W", None]},
        geometry=[box(0, 0, 1010, 2000), box(1000, 0, 2000, 2000)],
        crs=CRS,
    )
    gdf.to_file(tmp_path / "m.gpkg")
    (p,) = problems(profile_by=f"{tmp_path / 'm.gpkg'}:profile", layers=layer_set)
    assert (p.source, p.row, p.fix) == (
        str(tmp_path / "m.gpkg"),
        None,
        "fix the boundaries: land lies in one municipality.",
    )
    # Names: a blank one by its row, a profile under two names as the layer's.
    gdf.geometry = [box(0, 0, 1000, 2000), box(1000, 0, 2000, 2000)]
    gdf.to_file(tmp_path / "m.gpkg")
    (p,) = problems(profile_by=f"{tmp_path / 'm.gpkg'}:profile", layers=layer_set, name_field="name")
    assert (p.source, p.row, p.fix) == (str(tmp_path / "m.gpkg"), 2, "name its municipality, or drop the feature.")
    gdf["name"], gdf["profile"] = ["W", "E"], ["winneconne", "winneconne"]
    gdf.to_file(tmp_path / "m.gpkg")
    (p,) = problems(profile_by=f"{tmp_path / 'm.gpkg'}:profile", layers=layer_set, name_field="name")
    assert (p.source, p.row) == (str(tmp_path / "m.gpkg"), None)
    assert p.fix == "a profile is one municipality's ordinance: copy it for each, with its own name."
    gdf["profile"] = ["winneconne", "nowhere.toml"]
    gdf.to_file(tmp_path / "m.gpkg")
    (p,) = problems(profile_by=f"{tmp_path / 'm.gpkg'}:profile", layers=layer_set)
    assert p.source == str(tmp_path / "m.gpkg") and "profile 'nowhere.toml'" in p.message


def test_rows_keep_the_files_order_and_the_run_findings_are_listed_once(munis, layer_set):
    """A site in no municipality first in the file stays first, with its plan; a check not made
    (no DEM: no steep slopes measured) is listed once, not once per municipality."""
    sites = _sites().iloc[[3, 0, 1]].reset_index(drop=True)
    sites["plan_id"] = ["Far", None, None]
    out = screen_by_municipality(sites, profile_by=f"{munis}:profile", layers=layer_set)
    assert list(out["site_id"]) == ["away", "west", "east"]
    assert list(out.index) == [0, 1, 2] and out.iloc[0]["plan_id"] == "Far"
    assert out.crs is not None and out.geometry.name == "geometry"
    codes = [f["code"] for f in out.attrs["run_findings"]]
    alone = [f["code"] for f in screen(_sites(), layers=layer_set).attrs["run_findings"]]
    assert len(alone) > 1 and sorted(codes) == sorted(alone)  # every check not made, each once


def test_skip_ids_none_keeps_every_feature(munis, layer_set):
    v10 = _sites().rename(columns={"site_id": "PARCELID"})
    v10.loc[1, "PARCELID"] = "ROW"
    out = screen_by_municipality(
        v10, profile_by=f"{munis}:profile", layers=layer_set, id_field="PARCELID", skip_ids="none"
    )
    assert "ROW" in set(out["site_id"]) and len(out.attrs["skipped"]) == 0


def test_without_a_layer_set_the_bundled_one_serves(munis):
    """No --layers: the Village's bundled waters and DEM, each municipality's own boundary."""
    out = screen_by_municipality(_sites(), profile_by=f"{munis}:profile")
    assert list(out["site_id"]) == ["west", "east", "straddle", "straddle", "away"]
    assert list(out["permit"]) == ["not_required", "required", "required", "not_required", NOT_COVERED]


@pytest.mark.parametrize(
    ("reading", "plan_sqft", "permit"), [("whole", 3000.0, "required"), ("inside_only", 1500.0, "not_required")]
)
def test_a_plan_mate_no_municipality_covers_counts_as_the_profiles_reading_says(
    munis, layer_set, reading, plan_sqft, permit
):
    """§ 540-5: the site includes "areas that are part of a larger common plan of development";
    § 540-4B: the article applies "within the boundaries and jurisdiction of the Village". A
    plan's site in Eastville (2,000 sq ft) with a mate outside every municipality: the ``whole``
    reading counts the mate, the ``inside_only`` reading decides on the part inside; either says so, as
    the reading it is, naming the mate outside (issue 46)."""
    toml = munis.parent / "eastville.toml"
    text = toml.read_text()
    assert 'partial_jurisdiction = "whole"' in text
    toml.write_text(text.replace('partial_jurisdiction = "whole"', f'partial_jurisdiction = "{reading}"'))
    sites = gpd.GeoDataFrame(
        {"site_id": ["e", "away"], "plan_id": ["P1", "P1"]},
        geometry=[square_sqft(1400, 200, 1500.0), square_sqft(5000, 5000, 1500.0)],
        crs=CRS,
    )
    out = screen_by_municipality(sites, profile_by=f"{munis}:profile", layers=layer_set).set_index("site_id")
    assert out.loc["away", "permit"] == NOT_COVERED
    east = out.loc["e"]
    assert east["plan_disturbed_sqft"] == pytest.approx(plan_sqft, rel=1e-6)
    assert east["permit"] == permit
    codes = {f["code"]: f["message"] for f in json.loads(east["findings"])}
    said = codes["common_plan_inside_only" if reading == "inside_only" else "common_plan_partial"]
    assert "common_plan" not in codes and "3,000" in said and "wholly outside: away)" in said
    basis = {f["code"]: f["basis"] for f in json.loads(east["findings"])}
    assert basis["common_plan_inside_only" if reading == "inside_only" else "common_plan_partial"] == "interpretation"

import pytest
from pyproj import CRS

from esc_gis.errors import UnitsError
from esc_gis.units import SQFT_PER_ACRE, ft_to_crs_units, sqft_per_crs_area_unit, sqft_to_acres

from .conftest import K, L


def test_acre_is_43560_sqft():
    assert SQFT_PER_ACRE == 43_560
    assert sqft_to_acres(43_560.0) == 1.0


@pytest.mark.parametrize(
    ("crs", "expected"),
    [("EPSG:7594", K), ("EPSG:2222", 1.0), ("EPSG:3071", 1 / 0.3048**2)],
)
def test_area_unit_of_crs(crs, expected):
    # US survey feet (WISCRS), international feet, metres (WTM).
    assert sqft_per_crs_area_unit(CRS(crs)) == pytest.approx(expected, rel=1e-12)


def test_us_survey_foot_differs_from_international():
    assert K == pytest.approx(1.000004, rel=1e-9)
    assert ft_to_crs_units(50.0, CRS("EPSG:7594")) == pytest.approx(50.0 / L)


def test_geographic_crs_has_no_linear_unit():
    with pytest.raises(UnitsError, match="linear"):
        sqft_per_crs_area_unit(CRS("EPSG:4326"))

"""``plan.toml``: the non-map facts of a plan package for ``esc-gis review`` (§ 540-9A).

The model describes the file for editors and the configuration reference. The review reads the
facts itself and never refuses a package for them: a fact missing or of the wrong kind fails
(or needs a look at) the check that uses it, with its section, so an applicant gets a report
saying what to add, not an error. Every table keeps keys the model does not describe.
"""

from __future__ import annotations

__all__ = ["PlanFile"]

import datetime as dt

from pydantic import Field

from esc_gis.config._base import Number, Open


class Party(Open):
    """A person or firm: the landowner (§ 540-9A(1)) or a responsible party."""

    name: str | None = Field(None, description="The name.")
    address: str | None = Field(None, description="The mailing address.")
    phone: str | None = Field(None, description="The telephone number.")
    role: str | None = Field(None, description="What the party does (contractor, engineer).")


class PlanHead(Open):
    """``[plan]``: the plan's title and who prepared it."""

    title: str | None = Field(None, description="The plan's title, on the report.")
    prepared_by: str | None = Field(None, description="Who prepared the plan.")


class Site(Open):
    """``[site]``: the site's legal description, its claimed areas, and the screening's facts."""

    legal_description: str | None = Field(None, description="The legal description.")
    parcel_id: str | None = Field(None, description="The parcel's number.")
    site_area_sqft: Number | None = Field(None, description="The site's area, compared with the drawing.")
    disturbed_area_sqft: Number | None = Field(None, description="The area disturbed, compared with the drawing.")
    performance_standards: list[str] | None = Field(
        None, description="The performance standards the plan meets (the profile's codes), compared with what applies."
    )
    plan_id: str | None = Field(None, description="The larger common plan of development the site is part of.")
    plan_disturbed_sqft: Number | None = Field(None, description="The common plan's disturbed total, in sq ft.")
    activity: str | None = Field(None, description="The activity, as a screening's sites carry it (construction).")
    state_agency: bool | None = Field(None, description="Conducted by a state agency?")
    npdes_exempt: bool | None = Field(None, description="Exempt from the NPDES permit?")


class Schedule(Open):
    """``[schedule]``: § 540-9A(8), compared with the permit's 180 days (§ 540-8G)."""

    start: dt.date | None = Field(None, description="The day land disturbance starts (a TOML date).")
    end: dt.date | None = Field(None, description="The day of final stabilization (a TOML date).")
    sequence: list[str] | None = Field(None, description="The sequence of construction, step by step.")


class Narrative(Open):
    """``[narrative]``: the plan's words."""

    text: str | None = Field(None, description="How runoff is managed, BMP by BMP.")
    spill_procedures: str | None = Field(None, description="Spill prevention and response.")


class Rusle2(Open):
    """``[rusle2]``: the applicant's soil-loss figures (§ 540-9A(9); § 540-7B(3)(b) at one acre or more)."""

    sediment_tons_per_acre_year: Number | None = Field(None, description="The applicant's sediment discharge.")
    explanation: str | None = Field(None, description="Why, when over the standard at one acre or more.")
    ls: Number | None = Field(None, description="The applicant's LS, compared with LS on the DEM.")
    slope_length_ft: Number | None = Field(None, description="The applicant's slope length, in feet.")
    slope_pct: Number | None = Field(None, description="The applicant's steepness, in percent.")
    schedule_file: str | None = Field(
        None, description="The phased schedule (the format of esc-gis soil-loss --schedule), beside plan.toml."
    )
    ei_file: str | None = Field(None, description="The erosivity distribution the %R came from (as --ei-file).")
    r_annual: Number | None = Field(None, description="The applicant's annual R, used only when the profile has none.")
    k: Number | None = Field(None, description="The applicant's K, used only when the layer set has no [soils].")


class ReferenceGuide(Open):
    """``[reference_guide]``: § 540-9A(9), the Reference Guide's items."""

    included: bool | None = Field(
        None, description="The plan includes the Reference Guide's items (false: item 9 fails; absent: a look)."
    )


class Dxf(Open):
    """``[dxf]``: how a CAD drawing's layers map to the plan's."""

    layers: dict[str, str] | None = Field(
        None, description='CAD layer = plan layer ("site_boundary", "bmps:1056" with a BMP type, or "ignore").'
    )


class PlanFile(Open):
    """``plan.toml``: the plan's facts besides its map layers, beside the package."""

    crs: str | None = Field(None, description="The CRS of layers without one, and of a DXF (EPSG:7594).")
    plan: PlanHead | None = None
    landowner: Party | None = Field(None, description="The landowner: name, address, phone.")
    responsible_parties: list[Party] | None = Field(None, description="One table per party responsible.")
    site: Site | None = None
    schedule: Schedule | None = None
    narrative: Narrative | None = None
    rusle2: Rusle2 | None = None
    reference_guide: ReferenceGuide | None = None
    dxf: Dxf | None = None

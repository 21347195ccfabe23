r"""Where esc_gis's HTML comes from: Jinja2 templates shipped in ``esc_gis/templates/``, autoescaped.

Every HTML page and fragment the toolkit writes (the plan-review report, the registry's
inspection reports, log and office summary, the maps' legends, popups and notes, the
service's public page and basemap credit) is a template rendered here, never a Python
f-string. Autoescaping is on for every template, so a value such as a site address
``<script>alert(1)</script>`` or ``A & B`` is text wherever it lands; markup that is ours
(a nested fragment, a bundled script) is passed as :class:`markupsafe.Markup`, and data that
goes into a ``<script>`` element goes through the ``tojson`` filter, which escapes ``<``,
``>``, ``&`` and ``'`` as ``\u003c`` etc.

Templates are package data read with :class:`jinja2.PackageLoader`, so an installed wheel
renders them with no clone. Undefined names raise (``StrictUndefined``): a misspelt variable
is an error in the tests, not an empty cell in a report.
"""

from __future__ import annotations

__all__ = ["environment", "macro", "render", "render_string"]

from collections.abc import Callable
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup


@cache
def environment() -> Environment:
    """Return the one template environment (made on first use, then shared).

    Returns
    -------
    jinja2.Environment
        Autoescaping on, strict about undefined names, block tags leaving no blank lines.

    Raises
    ------
    ValueError
        If the package's ``templates`` folder is missing (a broken install).
    """
    env = Environment(
        loader=PackageLoader("esc_gis", "templates"),
        # Every template here is HTML (the service's page and the maps included): escape always,
        # including templates made from strings, rather than guess from a file name.
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # One trailing newline in a template is dropped (Jinja's default), so a fragment
        # renders with none, as the f-strings did.
        keep_trailing_newline=False,
    )
    # JSON in a <script> element: compact, in the data's own order, non-ASCII kept (pages are
    # UTF-8); tojson still escapes <, >, & and ' so no "</script>" can end the element.
    env.policies["json.dumps_kwargs"] = {"sort_keys": False, "separators": (",", ":"), "ensure_ascii": False}
    # Numbers as the f-strings wrote them: {{ area|fmt(",.0f") }} is f"{area:,.0f}".
    env.filters["fmt"] = format
    return env


def render(name: str, /, **context: Any) -> str:
    """Render the template ``name`` (a path under ``esc_gis/templates/``) with ``context``.

    Parameters
    ----------
    name : str
        E.g. ``"review/report.html.j2"``.
    **context
        The template's variables; text is escaped, :class:`markupsafe.Markup` is not.

    Returns
    -------
    str

    Raises
    ------
    jinja2.TemplateNotFound
        If there is no such template (a broken install).
    jinja2.UndefinedError
        If the template uses a variable not given.
    """
    return environment().get_template(name).render(**context)


def render_string(source: str, /, **context: Any) -> str:
    """Render a template given as text (a page that is also served as a file) with ``context``.

    Raises
    ------
    jinja2.TemplateSyntaxError
        If ``source`` is not a valid template.
    jinja2.UndefinedError
        If the template uses a variable not given.
    """
    return environment().from_string(source).render(**context)


def macro(name: str, macro_name: str) -> Callable[..., Markup]:
    """Return a macro of the template ``name``, callable from Python; it returns escaped markup.

    Fragments the maps put in GeoJSON properties (popups, tooltips) are macros of one
    template each, so they are escaped as the pages are.

    Raises
    ------
    jinja2.TemplateNotFound
        If there is no such template.
    AttributeError
        If the template defines no such macro.
    """
    fn: Callable[..., Markup] = getattr(environment().get_template(name).module, macro_name)
    return fn

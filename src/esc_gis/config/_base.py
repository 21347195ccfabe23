"""What every configuration model shares: base classes, field types, pydantic's errors in esc_gis's words.

A model only says what a file may hold; the words a user reads stay the owner's (today's
messages, pinned by the tests). Each owner turns :func:`errors` into its own error class with
a table of words keyed by the field an error is about (:func:`say`), so no pydantic message or
traceback reaches a user.
"""

from __future__ import annotations

__all__ = [
    "Loc",
    "Number",
    "Open",
    "Strict",
    "Text",
    "describe_fields",
    "errors",
    "fail",
    "say",
    "to_json",
]

import ast
import datetime as dt
import inspect
import itertools
import textwrap
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any, TypeVar, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, StrictFloat, StrictInt, WithJsonSchema
from pydantic import ValidationError as PydanticValidationError
from pydantic_core import PydanticCustomError

#: Where an error is: the keys (and list positions) from the top of the file.
Loc = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)


def _number(v: Any) -> Any:
    # One error for a value that is not a number, not one per branch of int | float.
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise fail("")  # worded by the key
    return v


#: A TOML number: an integer or a float, never a boolean (``true`` is not 1 in a profile).
Number = Annotated[StrictInt | StrictFloat, BeforeValidator(_number), WithJsonSchema({"type": "number"})]


def _text(v: Any) -> Any:
    # Today's readers took str(value) for free text (an adopted date written unquoted stays usable).
    return v if isinstance(v, str) or v is None else str(v)


#: Free text: a string, or anything else written as one (as the readers always took it).
Text = Annotated[str, BeforeValidator(_text)]


# The fields' docstrings are their descriptions in the JSON Schemas only: read from the source by
# describe_fields when a schema is written, not by pydantic's use_attribute_docstrings at every
# import, which on Python < 3.13 walks the stack and sys.modules for each model (a tenth of a
# registry command's start).
class Strict(BaseModel):
    """A table whose unknown keys are refused (a misspelt key would silently switch a check off)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=False)


class Open(BaseModel):
    """A table that keeps keys it does not describe (read by other parts of esc_gis, or notes)."""

    model_config = ConfigDict(extra="allow")


def _attribute_docs(cls: type) -> dict[str, str]:
    """Return each annotated attribute's docstring (the string literal right under it) in ``cls``'s source."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):  # no source (a frozen build): the schema has no descriptions
        return {}
    node = ast.parse(source).body[0]
    body = node.body if isinstance(node, ast.ClassDef) else []
    return {
        a.target.id: inspect.cleandoc(b.value.value)
        for a, b in itertools.pairwise(body)
        if isinstance(a, ast.AnnAssign)
        and isinstance(a.target, ast.Name)
        and isinstance(b, ast.Expr)
        and isinstance(b.value, ast.Constant)
        and isinstance(b.value.value, str)
    }


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """Yield the models an annotation names (``list[Trigger]``, ``dict[str, Set] | None``, ...)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in get_args(annotation):
        yield from _models_in(arg)


def describe_fields(model: type[BaseModel], _seen: set[type[BaseModel]] | None = None) -> None:
    """Give every field of ``model`` and of the models it holds its docstring as its description.

    For the JSON Schemas (:func:`esc_gis.config.schema`): the models are rebuilt, the models they
    hold first, so the schema carries each field's words. Reading files never needs it.
    """
    seen = set() if _seen is None else _seen
    if model in seen:
        return
    seen.add(model)
    for info in model.model_fields.values():
        for nested in _models_in(info.annotation):
            describe_fields(nested, seen)
    docs: dict[str, str] = {}
    for base in reversed(model.__mro__):  # a field declared on a base has its words there
        if isinstance(base, type) and issubclass(base, BaseModel) and base is not BaseModel:
            docs.update(_attribute_docs(base))
    for name, info in model.model_fields.items():
        if info.description is None and name in docs:
            info.description = docs[name]
    model.model_rebuild(force=True)


def fail(message: str) -> PydanticCustomError:
    """Return the error a validator raises, in esc_gis's own words (kept as they are by :func:`say`).

    Examples
    --------
    >>> fail("has no section").message()
    'has no section'
    """
    # The words go in the context, never the template: a message may hold braces ({year}).
    return PydanticCustomError("esc", "{text}", {"text": message})


def errors(model: type[M], data: Any) -> tuple[M | None, list[dict[str, Any]]]:
    """Validate ``data`` against ``model``; return the model, or None and every error found.

    Raises
    ------
    TypeError
        Never for bad data (that is returned); only if ``model`` is not a pydantic model.
    """
    try:
        return model.model_validate(data), []
    except PydanticValidationError as exc:
        return None, [dict(e) for e in exc.errors(include_url=False)]


def say(err: Mapping[str, Any], words: Mapping[str, str | Callable[[Any], str]], default: str = "") -> str:
    """Word one pydantic error as esc_gis does: by the key it is about, with the offending value.

    Parameters
    ----------
    err : mapping
        One of pydantic's ``errors()``.
    words : mapping
        Key (the last string in the error's location) -> a template with ``{input!r}``, or a
        function of the value. An error raised with :func:`fail` keeps its own words (when it
        has any: ``fail("")`` leaves the wording to the key).
    default : str
        The template for a key ``words`` does not name; pydantic's own short message if empty.

    Returns
    -------
    str

    Raises
    ------
    KeyError
        Never: a template names only ``input``.
    """
    if err["type"] == "esc" and err["ctx"]["text"]:
        return str(err["ctx"]["text"])
    # A missing key has the whole table as its input: the value given is None, as the readers said it.
    value = None if err["type"] == "missing" else err.get("input")
    keys = [k for k in err["loc"] if isinstance(k, str)]
    template = words.get(keys[-1], default) if keys else default
    if callable(template):
        return template(value)
    if not template:
        return f"{keys[-1] if keys else 'value'} {value!r}: {err['msg'][0].lower()}{err['msg'][1:]}"
    return template.format(input=value)


def to_json(data: Any) -> Any:
    """Return TOML (or YAML) data as JSON would hold it: dates and times as ISO text.

    A TOML date is a JSON string of format ``date`` in the schemas, as editors (Taplo) see it.

    Examples
    --------
    >>> to_json({"on": dt.date(2026, 1, 12), "x": [dt.time(8, 0)]})
    {'on': '2026-01-12', 'x': ['08:00:00']}
    """
    if isinstance(data, Mapping):
        return {str(k): to_json(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [to_json(v) for v in data]
    if isinstance(data, (dt.date, dt.time)):  # a datetime is a date
        return data.isoformat()
    return data

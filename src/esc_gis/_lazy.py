"""Attributes of a package imported on first use (PEP 562), to keep start-up light."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_getattr(package: str, names: dict[str, str]) -> Callable[[str], Any]:
    """Return a module ``__getattr__`` importing ``names[attr]`` the first time ``attr`` is used.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    names : dict
        Attribute name -> module that defines it.
    """

    def __getattr__(name: str) -> Any:
        if name not in names:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        value = getattr(importlib.import_module(names[name]), name)
        setattr(sys.modules[package], name, value)  # later look-ups skip this function
        return value

    return __getattr__

"""Attributes of a package imported on first use (PEP 562), to keep start-up light."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
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


def lazy_module(name: str) -> types.ModuleType:
    """Return module ``name``, executed at its first attribute access (the standard library's ``LazyLoader``).

    For a module that imports a heavy library only for some of its functions: the registry's
    listing commands never touch geopandas, and they start without paying for it. A module
    already imported is returned as it is.

    Raises
    ------
    ModuleNotFoundError
        If there is no module ``name``.
    """
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module

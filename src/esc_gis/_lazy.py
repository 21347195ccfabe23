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


#: What the import system set on a module before running it, read without running it: ``inspect.getmodule``
#: (which pydantic calls for every model's field docstrings) reads both on every module in ``sys.modules``.
_SET_BEFORE_RUNNING = frozenset({"__name__", "__file__"})


class _LazyModule(importlib.util._LazyModule):  # type: ignore[name-defined]
    """The standard library's lazy module, whose name and file are read without executing it."""

    def __getattribute__(self, attr: str) -> Any:
        if attr in _SET_BEFORE_RUNNING:
            known = object.__getattribute__(self, "__dict__")
            if attr in known:
                return known[attr]
        return super().__getattribute__(attr)


def lazy_module(name: str) -> types.ModuleType:
    """Return module ``name``, executed at its first attribute access (the standard library's ``LazyLoader``).

    For a module that imports a heavy library only for some of its functions: the registry's
    listing commands never touch geopandas, and they start without paying for it. A module
    already imported is returned as it is. Its ``__name__`` and ``__file__`` are read without
    running it, so ``inspect.getmodule`` (pydantic calls it while building a model) leaves it
    unrun; any other attribute runs it.

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
    module.__class__ = _LazyModule  # the first attribute other than these runs it, as LazyLoader's would
    return module

"""Names of a package that load on first use (PEP 562's module ``__getattr__``): the package
lists each name with the submodule that defines it, and only the first use of the name imports
that submodule (and the numpy or construct it needs)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(namespace: dict[str, Any], table: Mapping[str, str],
                    ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__``, for ``__getattr__, __dir__ =
    lazy_attributes(globals(), _LAZY)``: a name of *table* is taken from the submodule it
    names (relative to the package) at its first use, then kept in *namespace* (the
    package's globals), so that later uses find it without a call."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{where}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__

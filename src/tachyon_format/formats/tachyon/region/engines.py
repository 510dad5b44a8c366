"""Which decoder reads the sample region: the compiled record walk where it was built, else
the vectorised numpy decoder. Both give the same results (the tests compare them). The same
choice picks the scan of the string and frame tables (:func:`table_scans`).

* ``compiled``: :mod:`.walk` as built by ``setup.py`` (:class:`.walk_decoder.WalkDecoder`);
* ``numpy``: :class:`.decoder.SampleDecoder`, which needs no compiler;
* ``interpreted``: :mod:`.walk`'s source run by the interpreter (the reference decoder:
  slow, for tests and for reading the code as the spec).

The environment variable :data:`ENVIRONMENT` chooses for the whole process: ``numpy`` forces
the numpy decoder, ``compiled`` insists on the compiled walk (an error where it was not
built), ``auto`` (or unset) takes the compiled walk when there is one.
"""

from __future__ import annotations

import functools
import os
import sys
from types import ModuleType

ENVIRONMENT = "TACHYON_FORMAT_DECODER"
ENGINES = ("compiled", "numpy", "interpreted")

__all__ = ["ENGINES", "ENVIRONMENT", "decoder_info", "new_decoder", "resolve", "table_scans"]


@functools.cache
def _walk_module() -> ModuleType | None:
    """The compiled walk, or None where it was not built."""
    from . import walk

    return walk if walk.COMPILED else None


@functools.cache
def interpreted_walk() -> ModuleType:
    """:mod:`.walk` from its source, run by the interpreter even where it is compiled."""
    import importlib.util
    from pathlib import Path

    name = f"{__package__}._walk_interpreted"
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("walk.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def resolve(engine: str | None = None) -> str:
    """The engine to use: *engine* if given, else the environment's choice, else ``compiled``
    where it was built and ``numpy`` elsewhere."""
    choice = engine or os.environ.get(ENVIRONMENT, "auto").strip().lower() or "auto"
    if choice == "auto":
        return "compiled" if _walk_module() is not None else "numpy"
    if choice not in ENGINES:
        raise ValueError(f"{ENVIRONMENT}={choice!r}: expected auto, {', '.join(ENGINES)}")
    if choice == "compiled" and _walk_module() is None:
        raise RuntimeError(
            "the compiled record walk is not built in this installation (reinstall with a C"
            f" compiler and Cython at hand, or set {ENVIRONMENT}=numpy)")
    return choice


def decoder_info() -> dict[str, object]:
    """Which decoder reads Tachyon sample regions in this process, and why."""
    compiled = _walk_module()
    try:
        active, problem = resolve(), None
    except (ValueError, RuntimeError) as exc:
        active, problem = None, str(exc)
    return {"active": active, "compiled": compiled is not None,
            "compiled_module": getattr(compiled, "__file__", None),
            "environment": os.environ.get(ENVIRONMENT), "problem": problem}


def new_decoder(*, engine: str | None = None, aggregate: bool = False, **facts):
    """A decoder of the sample region (the interface of :class:`.decoder.SampleDecoder`),
    by :func:`resolve`. *facts*: the keywords of its constructor."""
    name = resolve(engine)
    if name == "numpy":
        from .decoder import SampleDecoder

        return SampleDecoder(**facts)
    from .walk_decoder import WalkDecoder

    module = _walk_module() if name == "compiled" else interpreted_walk()
    return WalkDecoder(aggregate=aggregate, module=module, **facts)


def table_scans(engine: str | None = None) -> ModuleType | None:
    """The module whose ``scan_string_table`` and ``scan_frame_table`` read a file's tables,
    by :func:`resolve`: the compiled walk, or its source interpreted; None for ``numpy``
    (the tables' own vectorised scan)."""
    name = resolve(engine)
    if name == "numpy":
        return None
    return _walk_module() if name == "compiled" else interpreted_walk()

"""Checks of construct declarations: parse and build both ways, interpreted and compiled (the
idiom of construct's own tests, ``common(format, data, obj, size)``)."""

from __future__ import annotations

from typing import Any

import construct as cs
import pytest

_COMPILED: dict[int, tuple[cs.Construct, cs.Construct]] = {}


def compiled(fmt: cs.Construct) -> cs.Construct:
    """``fmt.compile()``, once per declaration (the factories are cached, so ids are stable)."""
    if id(fmt) not in _COMPILED:
        _COMPILED[id(fmt)] = (fmt, fmt.compile())
    return _COMPILED[id(fmt)][1]


def plain(obj: Any) -> Any:
    """Containers as dicts without construct's ``_io``-style keys, so == is strict and fast."""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items() if not str(k).startswith("_")}
    if isinstance(obj, list):
        return [plain(v) for v in obj]
    return obj


def roundtrip(fmt: cs.Construct, data: bytes, obj: Any, *, size: int | None = None) -> None:
    """parse == obj, build == data, sizeof == size, for the interpreted and compiled variants."""
    expected = plain(obj)
    for variant in (fmt, compiled(fmt)):
        assert plain(variant.parse(data)) == expected
        assert variant.build(obj) == data
        if size is not None:
            assert variant.sizeof() == size == len(data)
        else:
            with pytest.raises(cs.SizeofError):
                variant.sizeof()


def parse_both(fmt: cs.Construct, data: bytes) -> Any:
    """Parse with both variants, check they agree, return the interpreted result."""
    obj = fmt.parse(data)
    assert plain(compiled(fmt).parse(data)) == plain(obj)
    return obj

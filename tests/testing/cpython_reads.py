"""What CPython 3.15's own reader makes of many Tachyon files, in one reference process, and
the same decode by this library, for tests that check files the testing helpers write.

The decode is ``tools/cpython_decode.py``'s canonical one: a ``get_info()`` line, then one
JSON line per sample in replay order, ``[interpreter_id, thread_id, timestamp_us, status,
frames]`` with frames innermost first (see tests/data/README.md).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence

import tachyon_format
from tachyon_format.render.canonical import write_canonical
from tests.helpers.paths import REPO
from tests.helpers.reference import run_reference

# Runs under the reference interpreter: a JSON list of paths on stdin; prints a JSON list of
# decodes (or {"error": message} for a file CPython's reader rejects).
_DECODE_MANY = """
import io, json, sys
sys.path.insert(0, sys.argv[1])
from cpython_decode import decode
out = []
for path in json.load(sys.stdin):
    buffer = io.StringIO()
    try:
        decode(path, "decode", buffer)
    except Exception as exc:
        out.append({"error": f"{type(exc).__name__}: {exc}"})
    else:
        out.append(buffer.getvalue())
print(json.dumps(out))
"""


def cpython_decodes(paths: Sequence[str | os.PathLike]) -> list[str | dict]:
    """CPython's canonical decode of each of *paths*, one reference process for all."""
    payload = json.dumps([os.fspath(p) for p in paths])
    printed = run_reference(_DECODE_MANY, os.fspath(REPO / "tools"), input=payload).stdout
    return json.loads(printed)


def our_decode(source) -> str:
    """This library's decode of *source* in the same canonical form."""
    out = io.StringIO()
    profile = tachyon_format.read(source)
    write_canonical(profile, tachyon_format.info(profile), out)
    return out.getvalue()


def sample_rows(decode: str) -> list:
    """The sample lines of a canonical decode, parsed, sorted (a multiset of samples)."""
    return sorted((json.loads(line) for line in decode.splitlines()[1:]), key=json.dumps)


def builder_rows(builder) -> list:
    """What a ProfileBuilder was told, as canonical sample rows (sorted): the expectation
    for CPython's decode, computed from the builder's input alone."""
    rows = []
    for s in builder.samples:
        frames = []
        for filename, funcname, lineno, end_lineno, column, end_column, opcode in s.frames[:256]:
            location = [None] * 4 if lineno == -1 else [lineno, end_lineno, column, end_column]
            frames.append([filename, funcname, *location, opcode])
        rows.append([s.interpreter, s.thread, s.timestamp_us, s.status, frames])
    return sorted(rows, key=json.dumps)

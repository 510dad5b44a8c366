"""Differential test against CPython 3.15's own reader (issue 13, item 6): on mutated golden
files (tests/formats/tachyon/mutations.py), ``read``, with every decoder of the region this
installation has, accepts exactly the files CPython's ``BinaryReader`` accepts, with the same
message when both refuse, and when both accept the decode is identical (info line and every
sample, in CPython's canonical form).

One reference subprocess decodes every file of a run. The deliberate differences
(docs/format/limits.md#differences-from-cpython) are avoided, not excused: the older layouts
are refused here as CPython refuses them (``legacy_layouts=False``).
"""

from __future__ import annotations

import hashlib
import io
import json
import random

import pytest

import tachyon_format
from tachyon_format import FormatError
from tachyon_format.formats.tachyon.file import open_file
from tachyon_format.formats.tachyon.reader import read as read_tachyon
from tachyon_format.render.canonical import write_canonical
from tests.formats.tachyon import mutations
from tests.helpers.paths import REPO
from tests.helpers.reference import requires_reference, run_reference

FILES_PER_RUN = 120

# Runs under the reference interpreter: one JSON line per path given on stdin.
_DRIVER = """
import hashlib, io, json, sys
sys.path.insert(0, sys.argv[1])
import cpython_decode
for path in sys.stdin.read().split():
    out = io.StringIO()
    try:
        cpython_decode.decode(path, "decode", out)
        result = {"ok": hashlib.sha256(out.getvalue().encode()).hexdigest()}
    except Exception as exc:
        result = {"error": str(exc), "type": type(exc).__name__}
    print(json.dumps(result), flush=True)
"""


ENGINES = ["numpy", *(["compiled"] if tachyon_format.decoder_info()["compiled"] else [])]
"""The region's decoders this installation has: each is compared with CPython."""


def ours(data: bytes, engine: str | None = None) -> dict:
    """Our verdict in the driver's form (with the decoder *engine*)."""
    try:
        with open_file(data, legacy_layouts=False) as meta:
            profile = read_tachyon(meta, engine=engine)
        out = io.StringIO()
        write_canonical(profile, tachyon_format.info(profile), out)
    except FormatError as exc:
        return {"error": exc.message}
    return {"ok": hashlib.sha256(out.getvalue().encode()).hexdigest()}


def verdict(result: dict) -> dict:
    """A verdict to compare: CPython's version message names the running interpreter, ours
    the format version this reader supports (docs/format/limits.md#differences-from-cpython):
    only the part about the file is compared."""
    error = result.get("error")
    if error is None:
        return {"ok": result["ok"]}
    if error.startswith("Binary file was created with"):
        error = error.partition(", but this ")[0]
    return {"error": error}


def theirs(paths: list) -> list[dict]:
    done = run_reference(_DRIVER, str(REPO / "tools"), input="\n".join(map(str, paths)))
    return [json.loads(line) for line in done.stdout.splitlines()]


def mutated_files(seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    return [mutations.mutated(rng.choice(mutations.GOLDEN), rng, rng.choice([1, 1, 2]))
            for _ in range(count)]


@requires_reference
@pytest.mark.slow
@pytest.mark.parametrize("seed", [13, 2026])
def test_mutated_files_read_as_cpython_reads_them(seed, tmp_path):
    files = mutated_files(seed, FILES_PER_RUN)
    paths = []
    for i, data in enumerate(files):
        paths.append(tmp_path / f"m{i}.bin")
        paths[-1].write_bytes(data)
    expected = theirs(paths)
    assert len(expected) == len(files)
    differences = []
    for path, data, cpython in zip(paths, files, expected, strict=True):
        for engine in ENGINES:
            got = ours(data, engine)
            if verdict(got) != verdict(cpython):
                differences.append((engine, path.name, got, cpython))
    accepted = sum("ok" in e for e in expected)
    assert 0 < accepted < len(files)  # (mutations that CPython accepts and refuses, both)
    assert not differences, differences[:5]

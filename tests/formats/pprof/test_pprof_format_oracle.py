"""DataDog's pprof-format (npm, 2.3.2), a decoder written independently of ours and of Go's,
reads what we write: every sample's stack, values and thread labels as our Profile has them;
and it reads the real pprof fixtures to the same samples as our reader."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import tachyon_format
from tests.helpers.npm import npm_package, require, run_node_lines
from tests.helpers.paths import DATA_DIR
from tests.helpers.pprof import fixture_files

SCRIPT = Path(__file__).parents[2] / "helpers" / "pprof_format_decode.js"
GOLDEN = sorted(DATA_DIR.glob("*.bin"))


def decode(*paths) -> list[dict]:
    node, package = require(npm_package("pprof-format", "2.3.2"))
    return run_node_lines(node, SCRIPT, str(package), *map(str, paths))


def _frame_key(profile, row: int) -> tuple:
    """A frame as pprof carries it: function, file, line (0 unknown), column (1-based, 0
    unknown)."""
    frames, texts = profile.frames, profile.strings.texts()
    line, column = int(frames.lineno[row]), int(frames.column[row])
    return (texts[frames.funcname[row]], texts[frames.filename[row]], max(line, 0),
            column + 1 if column >= 0 else 0)


def _decoded_totals(decoded: dict, type_index: int) -> Counter:
    out: Counter = Counter()
    for sample in decoded["samples"]:
        labels = {key: text for key, text, _, _ in sample["labels"] if text}
        thread = (labels.get("interpreter id"), labels.get("thread id"))
        stack = tuple(tuple(f[:4]) for f in sample["stack"])
        out[thread, stack] += int(sample["values"][type_index])
    return +out


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("pprof_format")
    profiles, paths = {}, []
    for source in GOLDEN:
        profiles[source.stem] = tachyon_format.read(source)
        path = out / f"{source.stem}.pb.gz"
        tachyon_format.write(profiles[source.stem], path)
        paths.append(path)
    return profiles, {Path(r["file"]).stem.removesuffix(".pb"): r for r in decode(*paths)}


@pytest.mark.parametrize("source", GOLDEN, ids=lambda p: p.stem)
def test_pprof_format_reads_our_samples(written, source):
    profiles, decoded = written
    profile, result = profiles[source.stem], decoded[source.stem]
    assert "error" not in result, result.get("error")
    assert result["sampleTypes"][0] == ["samples", "count"]
    expected: Counter = Counter()
    tuples = profile.stacks.tuples()
    for thread, stack in zip(profile.samples.thread.tolist(), profile.samples.stack.tolist(),
                             strict=True):
        key = (str(int(profile.threads.interpreter_id[thread])),
               str(int(profile.threads.thread_id[thread])))
        expected[key, tuple(_frame_key(profile, r) for r in tuples[stack])] += 1
    assert _decoded_totals(result, 0) == expected
    for sample in result["samples"]:  # the time value is the count times the period
        assert int(sample["values"][1]) == int(sample["values"][0]) * int(result["period"])


def test_pprof_format_and_we_read_the_real_fixtures_alike():
    files = fixture_files()
    if not files:
        pytest.skip("no pprof fixtures (shared fixtures absent)")
    for result in decode(*files):
        profile = tachyon_format.read(result["file"], format="pprof")
        assert "error" not in result, (result["file"], result.get("error"))
        assert [tuple(t) for t in result["sampleTypes"]] == \
            [(t.type, t.unit) for t in profile.meta.sample_types]
        assert len(result["samples"]) == len(profile.samples)
        tuples = profile.stacks.tuples()
        ours = [[str(int(v)) if abs(int(v)) > 2**53 else int(v) for v in row]
                for row in profile.samples.values.tolist()]
        assert [s["values"] for s in result["samples"]] == ours
        depth = [len(s["stack"]) for s in result["samples"]]
        assert depth == [len(tuples[s]) for s in profile.samples.stack.tolist()]

"""callgrind: what Valgrind's ``callgrind_annotate`` reads in our files is the profile.

* self costs per function (``--inclusive=no``) and inclusive costs (``--inclusive=yes``,
  recursion counted once per stack) equal what a per-stack Python count of the profile gives,
  for every event, on the golden Tachyon files, real pprof files and hypothesis-drawn stacks
  with recursion, empty stacks and functions that are both outermost and called;
* an aggregated profile (one row per distinct stack) gives the same bytes;
* the file's own totals and line costs add up, names are compressed once.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.formats.callgrind import sniff
from tachyon_format.formats.callgrind.costs import NO_STACK, ROOT, UNKNOWN_FILE, event_columns
from tachyon_format.formats.callgrind.writer import dumps
from tachyon_format.model import Frames, Meta, Profile, Samples, Stacks, Strings, Threads, ValueType
from tachyon_format.model.aggregate import aggregate_samples
from tests.helpers import callgrind_annotate
from tests.helpers.paths import DATA_DIR, SHARED_FIXTURES

GOLDEN = sorted(p.name for p in DATA_DIR.glob("*.bin"))
PPROF = SHARED_FIXTURES / "pprof_proto"


def expected(profile: Profile) -> tuple[dict, dict, tuple[int, ...]]:
    """Per ``file:function``: self and inclusive costs (each stack counted once per function
    it holds), from the stacks one by one (an independent model of the writer)."""
    _, per_sample = event_columns(profile)
    tuples = profile.stacks.tuples()
    strings, frames = profile.strings, profile.frames
    name_of = {}
    self_cost: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(per_sample.shape[1], int))
    inclusive: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(per_sample.shape[1], int))
    for stack, cost in zip(profile.samples.stack.tolist(), per_sample, strict=True):
        names = []
        for row in tuples[stack]:
            if row not in name_of:
                file = strings[int(frames.filename[row])] or UNKNOWN_FILE
                func = strings[int(frames.funcname[row])] or UNKNOWN_FILE
                name_of[row] = f"{file}:{func}".replace("\n", " ").replace("\r", " ")
            names.append(name_of[row])
        if not names:
            names = [f"{UNKNOWN_FILE}:{NO_STACK}"]
        self_cost[names[0]] += cost
        for name in set(names):
            inclusive[name] += cost
    return self_cost, inclusive, tuple(per_sample.sum(axis=0).tolist())


def check_with_annotate(profile: Profile, path) -> None:
    path.write_bytes(dumps(profile))
    events, _ = event_columns(profile)
    self_cost, inclusive, total = expected(profile)
    for mode, want in (("self", self_cost), ("inclusive", inclusive)):
        program, shown = callgrind_annotate.totals(path, num_events=len(events),
                                                   inclusive=mode == "inclusive")
        assert program == total
        root = shown.pop(f"{UNKNOWN_FILE}:{ROOT}", None)
        if root is not None and mode == "inclusive":  # it holds every non-empty stack
            no_stack = self_cost.get(f"{UNKNOWN_FILE}:{NO_STACK}", np.zeros(len(total)))
            assert root == tuple(int(t - n) for t, n in zip(total, no_stack, strict=True))
        got = {k: v for k, v in shown.items() if any(v)}
        want = {k: tuple(int(x) for x in v) for k, v in want.items() if v.any()}
        assert got == want, mode


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_files_read_by_callgrind_annotate(name, tmp_path):
    callgrind_annotate.tool()
    profile = tachyon_format.read(DATA_DIR / name)
    check_with_annotate(profile, tmp_path / "callgrind.out.1")


@pytest.mark.parametrize("name", ["google-pprof/internal/report/testdata/sample.cpu",
                                  "parca/pkg/query/testdata/profile-with-labels.pb.gz"])
def test_pprof_files_keep_every_sample_type(name, tmp_path):
    callgrind_annotate.tool()
    path = PPROF / name
    if not path.exists():
        pytest.skip(f"shared fixture {path} absent")
    profile = tachyon_format.read(path)
    events, _ = event_columns(profile)
    timed = any(t.unit == "nanoseconds" for t in profile.meta.sample_types)
    assert len(events) == len(profile.meta.sample_types) + (not timed and
                                                           profile.meta.period > 0)
    check_with_annotate(profile, tmp_path / "callgrind.out.2")


def test_aggregated_profile_gives_the_same_file():
    profile = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    assert dumps(aggregate_samples(profile)) == dumps(profile)
    assert dumps(aggregate_samples(profile, keep_status=False)) == dumps(profile)


def synthetic(stacks: list[list[int]], weights: list[int], num_functions: int,
              num_files: int, period_ns: int) -> Profile:
    """Frames: function ``f`` of file ``f % num_files`` at lines ``10 * f + k`` (each stack
    frame gets its own line, so self costs spread over lines too)."""
    texts = [""] + [f"f{i}" for i in range(num_functions)] + [f"mod{i}.py" for i in
                                                               range(num_files)]
    rows: dict[tuple[int, int], int] = {}
    keyed = [[rows.setdefault((f, k % 3), len(rows)) for k, f in enumerate(s)] for s in stacks]
    pairs = sorted(rows, key=rows.get)
    n = len(pairs)
    lineno = np.array([10 * f + k for f, k in pairs], np.int32)
    unknown = np.full(n, -1, np.int32)
    frames = Frames(np.array([1 + num_functions + f % num_files for f, _ in pairs], np.uint32),
                    np.array([1 + f for f, _ in pairs], np.uint32), lineno, lineno, unknown,
                    unknown, np.full(n, -1, np.int16))
    non_empty = [s for s in keyed if s]
    tree, ids = Stacks.from_lists(non_empty) if non_empty else (Stacks.empty(), [])
    it = iter(np.asarray(ids).tolist())
    stack = np.array([next(it) if s else -1 for s in keyed], np.int32)
    return Profile(Strings.from_texts(texts), frames, tree, Threads.empty(),
                   Samples(stack, np.full(len(stacks), -1, np.int32),
                           values=np.array(weights, np.int64).reshape(-1, 1)),
                   Meta(period_type=ValueType("cpu", "nanoseconds"), period=period_ns))


stack_lists = st.lists(st.lists(st.integers(0, 5), max_size=7), min_size=1, max_size=25)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stacks=stack_lists, data=st.data(), num_files=st.integers(1, 3))
def test_drawn_stacks_read_by_callgrind_annotate(stacks, data, num_files, tmp_path):
    callgrind_annotate.tool()
    weights = data.draw(st.lists(st.integers(0, 1000), min_size=len(stacks),
                                 max_size=len(stacks)))
    profile = synthetic(stacks, weights, 6, num_files, period_ns=1_000_000)
    check_with_annotate(profile, tmp_path / "callgrind.out.3")


def test_costs_add_up_and_names_are_compressed():
    profile = tachyon_format.read(DATA_DIR / "deep_recursion_wall.bin")
    text = dumps(profile).decode()
    lines = text.splitlines()
    assert lines[0] == "# callgrind format" and sniff(text.encode()[:4096])
    events = next(line for line in lines if line.startswith("events:")).split()[1:]
    assert events == ["samples", "wall_ns"]
    summary = [int(v) for v in lines[lines.index(next(x for x in lines if x.startswith(
        "summary:")))].split()[1:]]
    assert summary[0] == len(profile.samples.stack)
    assert summary[1] == len(profile.samples.stack) * profile.meta.period
    self_total, after_calls = np.zeros(2, int), False
    for line in lines:
        if re.match(r"\d+ ", line):
            if not after_calls:
                self_total += [int(v) for v in line.split()[1:]]
            after_calls = False
        elif line.startswith("calls="):
            after_calls = True
    assert self_total.tolist() == summary  # every sample is the self cost of one line
    defined = Counter(re.findall(r"^c?fn=\((\d+)\) ", text, flags=re.M))
    assert defined and max(defined.values()) == 1  # each name spelled out once


def test_sniff():
    assert sniff(b"# callgrind format\nversion: 1\n")
    assert sniff(b"version: 1\ncreator: callgrind-3.19.0\npid: 7\ncmd: ./a\n"
                 b"positions: line\nevents: Ir\n")
    assert sniff(b"events: Ir\n")
    assert not sniff(b"version: 1\nfl=(1) a.c\n")
    assert not sniff(b"\x1f\x8b\x08\x00")
    assert not sniff(b'{"traceEvents": []}')


def test_write_through_the_public_verb(tmp_path):
    profile = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    tachyon_format.write(profile, tmp_path / "callgrind.out.42")
    tachyon_format.write(profile, tmp_path / "run.callgrind")
    data = dumps(profile)
    assert (tmp_path / "callgrind.out.42").read_bytes() == data
    assert (tmp_path / "run.callgrind").read_bytes() == data
    assert tachyon_format.sniff(tmp_path / "run.callgrind") == "callgrind"

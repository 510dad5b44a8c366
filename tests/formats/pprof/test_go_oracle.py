"""Go's own pprof as the oracle: what ``go tool pprof`` prints of our files and of ours'
reading of the real files."""

from __future__ import annotations

import re
from collections import Counter

import pytest

import tachyon_format
from tachyon_format.formats.pprof.writer import dumps
from tests.helpers.paths import DATA_DIR
from tests.helpers.pprof import fixture_params, parse_raw


def raw_of(data: bytes, tmp_path, go_tool, name="p.pb.gz"):
    path = tmp_path / name
    path.write_bytes(data)
    return parse_raw(go_tool.pprof("-raw", str(path)))


@pytest.mark.parametrize("path", fixture_params())
def test_go_prints_the_same_for_our_copy(path, tmp_path, go_tool):
    original = parse_raw(go_tool.pprof("-raw", str(path)))
    ours = raw_of(dumps(tachyon_format.read(path)), tmp_path, go_tool)
    assert ours == original


def expected_raw(profile) -> list[tuple]:
    """What -raw prints of each sample, made from our reading of the file."""
    facts = profile.extras["pprof"]
    c = facts.columns
    s = profile.strings
    f = profile.frames
    fn = c["function_id"].size

    def line_text(frame):
        row = int(c["frame_function"][frame])
        if row < 0:
            return "??"
        name, system = s[c["function_name"][row]], s[c["function_system_name"][row]]
        text = (f"{name} {s[c['function_filename'][row]]}:{int(c['frame_line'][frame])} "
                f"s={int(c['function_start_line'][row])}")
        return text + (f"({system})" if name != system else "")

    first = c["location_first_frame"]
    location_of_head = {int(fr): i for i, fr in enumerate(first.tolist())}
    texts = []
    for i, fr in enumerate(first.tolist()):
        lines = int(c["location_num_lines"][i])
        head = f"{int(f.address[fr]):#x} " + ("[F] " if c["location_is_folded"][i] else "")
        if lines == 0:
            texts.append((head.rstrip(),))
        else:
            out = [head + line_text(fr)] + [line_text(fr + k) for k in range(1, lines)]
            texts.append(tuple(t.rstrip() for t in out))
    del fn
    tuples = profile.stacks.tuples()
    labels: dict[int, dict[str, list[str]]] = {}
    for i, key, string, num, unit in zip(*(c[f"label_{n}"].tolist() for n in (
            "sample", "key", "str", "num", "num_unit")), strict=True):
        if string:
            labels.setdefault(i, {}).setdefault(s[key], []).append(s[string])
        elif num or unit:
            labels.setdefault(i, {}).setdefault(s[key], []).append(
                f"{num} {s[unit]}" if unit else str(num))
    out = []
    for i in range(len(profile.samples)):
        locs = tuple(texts[location_of_head[fr]] for fr in tuples[int(profile.samples.stack[i])]
                     if fr in location_of_head)
        lab = tuple(sorted((k, " ".join(v)) for k, v in labels.get(i, {}).items()))
        out.append((tuple(profile.samples.values[i].tolist()), locs, lab))
    return merged(out)


def merged(samples: list[tuple]) -> list[tuple]:
    """Samples with the same locations and labels as one, values added, in order of first
    appearance: what pprof's fetch does (``profile.Merge`` of the one profile)."""
    totals: dict[tuple, list[int]] = {}
    for values, locs, labels in samples:
        seen = totals.setdefault((locs, labels), [0] * len(values))
        seen[:] = [a + b for a, b in zip(seen, values, strict=True)]
    return [(tuple(v), locs, labels) for (locs, labels), v in totals.items()]


@pytest.mark.parametrize("path", fixture_params())
def test_our_reading_is_what_go_reads(path, go_tool):
    go = parse_raw(go_tool.pprof("-raw", str(path)))
    profile = tachyon_format.read(path)
    default = profile.meta.default_sample_type or ""
    assert go["types"] == [f"{v.type}/{v.unit}" + ("[dflt]" if v.type == default else "")
                           for v in profile.meta.sample_types]
    assert expected_raw(profile) == go["samples"]


def tachyon_expected(profile):
    """-raw samples Go should print for a Tachyon profile written aggregated, computed from
    the Tachyon columns alone."""
    s, f, th = profile.strings, profile.frames, profile.threads
    period = profile.meta.period
    tuples = profile.stacks.tuples()
    counts: Counter = Counter()
    order = []
    for i in range(len(profile.samples)):
        key = (int(profile.samples.stack[i]), int(profile.samples.thread[i]),
               int(profile.samples.status[i]))
        if key not in counts:
            order.append(key)
        counts[key] += 1
    names = {1: "has_gil", 2: "on_cpu", 4: "unknown", 8: "gil_requested",
             16: "has_exception", 32: "main_thread"}
    out = []
    for stack, thread, status in order:
        locs = tuple((f"0x0 {s[f.funcname[x]]} {s[f.filename[x]]}:{max(int(f.lineno[x]), 0)}"
                      " s=0()",) for x in tuples[stack])
        status_text = "|".join(n for bit, n in names.items() if status & bit) or "none"
        labels = (("interpreter id", str(int(th.interpreter_id[thread]))),
                  ("thread id", str(int(th.thread_id[thread]))),
                  ("thread status", status_text))
        n = counts[(stack, thread, status)]
        out.append(((n, n * period), locs, labels))
    return merged(out)


@pytest.mark.parametrize("name", ["threads_gil_blocking", "deep_recursion_wall",
                                  "exceptions_gc_gil_native", "threads_cpu_opcodes_raw"])
def test_go_reads_tachyon_as_we_wrote_it(name, tmp_path, go_tool):
    profile = tachyon_format.read(DATA_DIR / f"{name}.bin")
    go = raw_of(dumps(profile), tmp_path, go_tool)
    assert go["types"] == ["samples/count", f"{profile.meta.period_type.type}/nanoseconds"]
    assert go["samples"] == tachyon_expected(profile)
    assert f"PeriodType: {profile.meta.period_type.type} nanoseconds" in go["head"]
    assert f"Period: {profile.meta.period}" in go["head"]


def test_go_reads_timestamps_and_raw_protobuf(tmp_path, go_tool):
    profile = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    go = raw_of(dumps(profile, timestamps=True, compression="none"), tmp_path, go_tool,
                "p.pb")
    stamps = [int(v.split()[0]) for _, _, labels in go["samples"] for k, v in labels
              if k == "end_timestamp_ns"]
    assert stamps == [t * 1000 for t in profile.samples.timestamp_us.tolist()]
    assert sum(v[0] for v, _, _ in go["samples"]) == len(profile.samples)


def test_go_top_matches_leaf_totals(tmp_path, go_tool):
    profile = tachyon_format.read(DATA_DIR / "threads_cpu_opcodes_raw.bin")
    path = tmp_path / "t.pb.gz"
    path.write_bytes(dumps(profile))
    text = go_tool.pprof("-top", "-nodecount=100000", "-nodefraction=0", "-edgefraction=0",
                     "-sample_index=samples", str(path))
    flat: Counter = Counter()
    for line in text.splitlines():
        match = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+(.+)$", line)
        if match and int(match.group(1)):
            flat[match.group(2)] += int(match.group(1))
    tuples = profile.stacks.tuples()
    ours: Counter = Counter()
    for stack in profile.samples.stack.tolist():
        if stack >= 0:
            ours[profile.strings[profile.frames.funcname[tuples[stack][0]]]] += 1
    assert flat == ours


def test_go_reads_default_type_and_comments(tmp_path, go_tool):
    """Go 1.19's pprof predates Line.column and doc_url (it skips them, as unknown fields);
    it shows the default sample type and the comments."""
    profile = tachyon_format.read(DATA_DIR / "threads_cpu_opcodes_raw.bin")
    data = dumps(profile, default_sample_type="samples", comments=["one", "two"],
                 doc_url="https://example.org/doc.html")
    path = tmp_path / "d.pb.gz"
    path.write_bytes(data)
    text = go_tool.pprof("-raw", str(path))
    assert text.startswith("Comment: one\nComment: two\n")
    assert parse_raw(text)["types"][0] == "samples/count[dflt]"

"""``go tool pprof`` itself as the oracle, on real files and on files we wrote.

``go tool pprof -raw`` prints the profile after the driver's own processing (samples with
equal stacks merged, unused mappings dropped, local symbolization unless
``-symbolize=none``), so what it prints is compared as per-stack totals
(``pprof_text.stack_totals``). Fresh profiles from libprofiler are symbolized by pprof
from the program that was profiled, which checks addresses and map text end to end.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import tachyon_format
from tachyon_format.formats.gperftools.reader import parse
from tachyon_format.formats.gperftools.writer import build
from tests.helpers.libprofiler import COMMITTED_PROFILES, PPROF_PROFILES
from tests.helpers.paths import DATA_DIR
from tests.helpers.pprof_text import go_profile_string, parse_go_profile_string, stack_totals


def our_totals(profile, go_oracle) -> Counter:
    return stack_totals(parse_go_profile_string(
        go_profile_string(profile, columns=go_oracle.prints_columns)))


def raw_totals(go_oracle, path, **options) -> Counter:
    return stack_totals(parse_go_profile_string(go_oracle.pprof_raw(path, **options)))


def without_mappings(totals: Counter) -> Counter:
    out: Counter = Counter()
    for (stack, column), value in totals.items():
        out[(tuple((address, text) for address, _, text in stack), column)] += value
    return out


def test_pprof_raw_reads_every_file_as_we_do(go_oracle):
    paths = PPROF_PROFILES + COMMITTED_PROFILES
    for path in paths:
        ours = our_totals(tachyon_format.read(path), go_oracle)
        assert raw_totals(go_oracle, path) == ours, path.name
        assert len(ours) >= 6


def test_pprof_raw_reads_what_we_wrote(go_oracle, tmp_path):
    """Real profiles rewritten (map text from the mappings, other layouts) and an address
    profile whose callers pprof would cut without the guard."""
    written = []
    for path in PPROF_PROFILES + COMMITTED_PROFILES:
        profile = tachyon_format.read(path)
        expected = our_totals(profile, go_oracle)
        profile.extras.clear()
        copy = tmp_path / f"copy-{path.parent.parent.name}-{path.name}"
        copy.write_bytes(build(profile, byte_order=">"))
        written.append((copy, expected))
    for copy, expected in written:
        assert raw_totals(go_oracle, copy) == expected, copy.name


def test_pprof_raw_shows_the_names_of_a_python_profile(go_oracle, tmp_path):
    python = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    path = tmp_path / "python.prof"
    tachyon_format.write(python, path, format="gperftools")
    shown = raw_totals(go_oracle, path)
    assert shown == our_totals(tachyon_format.read(path), go_oracle)
    functions = {text.split(" ")[0] for stack, _ in shown for _, _, text in stack}
    assert {"fib", "parse_worker", "Thread.run", "<module>"} <= functions
    total = sum(v for (_, column), v in shown.items() if column == 0)
    assert total == len(python.samples)


def test_pprof_symbolizes_libprofiler_output_and_our_rewrite_alike(libprofiler_runs,
                                                                   go_oracle, tmp_path):
    """pprof finds the profiled program through the map text, so a rewrite whose map text we
    generated (offsets of a PIE binary included) must symbolize to the same functions."""
    for mode, made in libprofiler_runs.items():
        profile = tachyon_format.read(made.profile)
        original = raw_totals(go_oracle, made.profile, symbolize=True)
        profile.extras.clear()
        copy = tmp_path / f"rewritten-{mode}.prof"
        copy.write_bytes(build(profile))
        assert copy.read_bytes() != made.profile.read_bytes()
        rewritten = raw_totals(go_oracle, copy, symbolize=True)
        assert without_mappings(rewritten) == without_mappings(original), mode
        leaves = Counter()
        for (stack, column), value in original.items():
            if column == 0:
                leaves[stack[0][2].split(" ")[0]] += value
        assert leaves.most_common(1)[0][0] == "leaf", leaves
        assert without_mappings(original) == without_mappings(our_totals_named(
            profile, original)), mode


def our_totals_named(profile, pprof_view: Counter) -> Counter:
    """Our reading's stacks, each address named as pprof named it (the functions come from
    pprof's symbolization; the stacks, counts and addresses from our reading)."""
    names = {address: text for stack, _ in pprof_view for address, _, text in stack}
    tuples = profile.stacks.tuples()
    out: Counter = Counter()
    values = profile.samples.values
    address = profile.frames.address
    for i, stack in enumerate(profile.samples.stack.tolist()):
        key = tuple((int(address[f]), "", names.get(int(address[f]), ""))
                    for f in tuples[stack])
        for column in range(values.shape[1]):
            out[(key, column)] += int(values[i, column])
    return Counter({k: v for k, v in out.items() if v})


def test_go_reads_fresh_libprofiler_profiles_as_we_do(libprofiler_runs, go_oracle):
    paths = [made.profile for made in libprofiler_runs.values()]
    for path, text in zip(paths, go_oracle.profile_strings(paths), strict=True):
        profile = tachyon_format.read(path)
        assert go_profile_string(profile, columns=go_oracle.prints_columns) == text
        assert np.all(profile.frames.mapping >= 0)
    # How many signal frames pprof drops depends on the machine's libc and kernel (none on
    # some); the string comparison above is what checks that we drop the same ones.
    hot = tachyon_format.read(libprofiler_runs["hot"].profile)
    assert len(hot.extras["gperftools"].dropped_frames) <= 2


def test_round_trip_of_fresh_profiles_without_go(libprofiler_runs):
    for made in libprofiler_runs.values():
        profile = tachyon_format.read(made.profile)
        before = go_profile_string(profile)
        assert go_profile_string(parse(build(profile))) == before
        profile.extras.clear()
        assert go_profile_string(parse(build(profile, word_size=8, byte_order=">"))) == before


@pytest.mark.parametrize("name", ["libprofiler_mixed.prof", "libprofiler_hot.prof"])
def test_committed_profiles_name_their_program(name):
    profile = tachyon_format.read(DATA_DIR / "gperftools" / name)
    assert profile.strings[profile.mappings.filename[0]].endswith("/cpu_work")

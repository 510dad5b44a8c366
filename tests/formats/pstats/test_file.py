"""Malformed pstats files: ``validate`` reports and never raises, ``read``/``info`` raise only
FormatError, declared lengths are checked before ``marshal`` allocates."""

from __future__ import annotations

import marshal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.errors import FormatError
from tachyon_format.formats.pstats.file import load, scan_marshal
from tests.helpers.paths import DATA_DIR

GOLDEN = (DATA_DIR / "synthetic_edges_raw.pstats").read_bytes()  # odd names, 1.3 kB


def test_goldens_and_cprofile_output_are_valid(tmp_path):
    import cProfile

    cProfile.run("sorted(range(50))", str(tmp_path / "c.pstats"))
    for path in [*DATA_DIR.glob("*.pstats"), tmp_path / "c.pstats"]:
        assert tachyon_format.sniff(path) == "pstats"
        assert tachyon_format.validate(path) == []
        assert load(path) == marshal.loads(path.read_bytes())


def test_read_says_pstats_holds_no_stacks():
    with pytest.raises(FormatError, match="no stacks"):
        tachyon_format.read(GOLDEN)


def test_info_sums_the_file():
    facts = tachyon_format.info(DATA_DIR / "synthetic_edges_raw.pstats")
    stats = marshal.loads(GOLDEN)
    assert facts["sampled"] and facts["num_functions"] == len(stats) - 1
    stacks = tachyon_format.read(DATA_DIR / "synthetic_edges_raw.bin").samples.stack
    assert facts["total_cc"] == (stacks >= 0).sum()  # (empty stacks count for nothing)


def test_every_truncation_is_reported():
    for end in range(1, len(GOLDEN)):
        problems = tachyon_format.validate(GOLDEN[:end], format="pstats")
        assert len(problems) == 1 and problems[0].offset is not None, end
        with pytest.raises(FormatError):
            load(GOLDEN[:end])


@pytest.mark.parametrize("data, message", [
    (b"{(\xff\xff\xff\x7f", "declared length 2147483647"),  # a 16 GB tuple, refused first
    (b"{[\x00\x00\x00\x40", "declared length"),
    (b"{)\x01s\xff\xff\xff\x7f", "declared length"),
    (b"{)\x01l\xff\xff\xff\x7f", "declared length"),
    (b"{" + marshal.dumps(compile("1", "f", "eval")) + b"N0", "cannot be in a stats dict"),
    (b"{" * 40, "nested too deeply"),
    (marshal.dumps({("a", 1, "f"): (1, 1, 0.1, 0.1, {})}) + b"N", "bytes after"),
    (marshal.dumps([1]), "not a pstats file"),
    (marshal.dumps({("a", "1", "f"): (1, 1, 0.1, 0.1, {})}), "not a function"),
    (marshal.dumps({("a", 1, "f"): (1, 1, 0.1, {})}), "not (cc, nc, tt, ct, callers)"),
    (marshal.dumps({("a", 1, "f"): (1, "1", 0.1, 0.1, {})}), "not numbers"),
    (marshal.dumps({("a", 1, "f"): (1, 1, 0.1, 0.1, [])}), "callers is not a dict"),
    (marshal.dumps({("a", 1, "f"): (1, 1, 0.1, 0.1, {("b",): 1})}), "caller is not"),
    (marshal.dumps({("a", 1, "f"): (1, 1, 0.1, 0.1, {("b", 2, "g"): "x"})}), "count"),
    (b"", "empty"),
])
def test_malformed_files_name_the_problem(data, message):
    with pytest.raises(FormatError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load(data)
    assert message.split(" (")[0] in tachyon_format.validate(data, format="pstats")[0].message


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64) | st.binary(max_size=64).map(lambda b: b"{" + b))
def test_random_bytes_never_crash(data):
    problems = tachyon_format.validate(data, format="pstats")
    assert isinstance(problems, list)
    try:
        load(data)
    except FormatError:
        assert problems
    else:
        assert problems == []


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(
    st.tuples(st.text(max_size=5), st.integers(-5, 10**6), st.text(max_size=5)),
    st.tuples(st.integers(0, 2**70), st.integers(0, 9), st.floats(allow_nan=False),
              st.floats(allow_nan=False),
              st.dictionaries(st.tuples(st.text(max_size=3), st.integers(0, 9),
                                        st.text(max_size=3)), st.integers(0, 99), max_size=3)),
    max_size=5))
def test_any_stats_dict_marshal_writes_passes_the_scan(stats):
    for version in range(2, marshal.version + 1):
        data = marshal.dumps(stats, version)
        scan_marshal(data)
        if data[:1] in (b"{", b"\xfb") and len(data) > 2:
            assert load(data) == stats

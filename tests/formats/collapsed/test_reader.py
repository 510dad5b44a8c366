"""The collapsed reader: speedscope's test inputs (every encoding and line end it reads),
CPython's own outputs read back, hypothesis round trips through every dialect, bad input."""

from __future__ import annotations

import codecs

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format import FormatError
from tachyon_format.formats.collapsed.reader import read
from tachyon_format.formats.collapsed.writer import dumps
from tachyon_format.model import Frames, Profile, Samples, Stacks, Strings, Threads
from tests.helpers.paths import DATA_DIR, SHARED_FIXTURES

SPEEDSCOPE = (SHARED_FIXTURES / "collapsed" / "jlfwong-speedscope" / "sample" / "profiles"
              / "stackcollapse")
SIMPLE = {("a", "b", "c"): 5, ("a", "b", "d"): 4, ("a", "b"): 5}


@pytest.fixture(scope="module")
def speedscope():
    if not SPEEDSCOPE.is_dir():
        pytest.skip(f"no shared fixtures at {SPEEDSCOPE} (speedscope's collapsed test files)")
    return SPEEDSCOPE


def counted(profile: Profile) -> dict[tuple[str, ...], int]:
    """Summed count per stack of function names, outermost first."""
    out: dict[tuple[str, ...], int] = {}
    names = profile.strings.texts()
    for stack, count in zip(profile.samples.stack.tolist(), profile.weights().tolist(),
                            strict=True):
        key = tuple(names[profile.frames.funcname[f]] for f in profile.stacks.tuples()[stack])
        out[key[::-1]] = out.get(key[::-1], 0) + count
    return out


@pytest.mark.parametrize("name", ["simple.txt", "simple-crlf.txt", "simple-utf16-le.txt",
                                  "simple-utf16-be.txt"])
def test_every_encoding_reads_as_the_same_profile(speedscope, name):
    profile = tachyon_format.read(speedscope / name)  # found by sniffing
    assert counted(profile) == SIMPLE
    facts = profile.extras["collapsed"]
    assert facts.encoding == {"simple-utf16-le.txt": "utf-16-le",
                              "simple-utf16-be.txt": "utf-16-be"}.get(name, "utf-8")
    assert (facts.line_ends == "\r\n") == (name in ("simple-crlf.txt", "simple-utf16-le.txt"))
    assert len(profile.threads) == 0 and (profile.samples.thread == -1).all()


def test_invalid_line_is_named_or_skipped(speedscope):
    path = speedscope / "simple-with-invalids.txt"
    with pytest.raises(FormatError) as caught:
        tachyon_format.read(path)
    assert caught.value.path == "line 8" and "invalid line" in str(caught.value)
    data = path.read_bytes()
    assert data[caught.value.offset:].startswith(b"invalid line")
    assert list(map(str, tachyon_format.validate(path))) == [str(caught.value)]
    profile = tachyon_format.read(path, errors="skip")
    assert counted(profile) == SIMPLE
    assert profile.extras["collapsed"].skipped_lines == (8,)
    assert profile.extras["collapsed"].num_comments == 2
    assert tachyon_format.info(path)["num_skipped_lines"] == 1


@pytest.mark.parametrize("name", ["recursion.txt", "alternating.txt", "tall.txt"])
def test_other_speedscope_inputs(speedscope, name):
    text = (speedscope / name).read_text()
    expected: dict[tuple[str, ...], int] = {}
    for line in text.splitlines():
        stack, count = line.rsplit(" ", 1)
        expected[tuple(stack.split(";"))] = expected.get(tuple(stack.split(";")), 0) + int(count)
    profile = tachyon_format.read(speedscope / name)
    assert counted(profile) == expected
    assert profile.extras["collapsed"].style == "function"


GOLDEN = sorted(DATA_DIR.glob("*.collapsed.txt"))


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_cpython_outputs_read_back(path):
    """CPython's dialect: threads from the prefix, file, function and line per frame; writing
    the profile again gives CPython's bytes."""
    data = path.read_bytes()
    profile = tachyon_format.read(data, format="collapsed")
    assert dumps(profile) == data
    if not data:
        return
    assert profile.extras["collapsed"].style == "cpython"
    binary = tachyon_format.read(path.with_name(path.name.replace(".collapsed.txt", ".bin")))
    assert set(profile.threads.thread_id.tolist()) <= set(binary.threads.thread_id.tolist())
    assert int(profile.weights().sum()) == sum(int(x.rsplit(b" ", 1)[1])
                                               for x in data.splitlines())


# -- round trips through our own dialects ----------------------------------------------------

NAME = st.text(st.sampled_from("abcxyz_.<>-é0λ/"), min_size=1, max_size=6)
PLAIN = NAME.filter(lambda s: "/" not in s)  # (the cpython dialect writes basenames)


@st.composite
def profiles(draw, files=PLAIN) -> Profile:
    frames = draw(st.lists(st.tuples(files | st.just("~"), NAME,
                                     st.integers(-1, 2**31 - 1)), min_size=1, max_size=6))
    texts = sorted({t for f in frames for t in f[:2]})
    at = {t: i for i, t in enumerate(texts)}
    lineno = np.array([f[2] for f in frames], np.int32)
    table = Frames(np.array([at[f[0]] for f in frames], np.uint32),
                   np.array([at[f[1]] for f in frames], np.uint32), lineno, lineno.copy(),
                   np.full(len(frames), -1, np.int32), np.full(len(frames), -1, np.int32),
                   np.full(len(frames), -1, np.int16))
    stacks = draw(st.lists(st.lists(st.integers(0, len(frames) - 1), min_size=1, max_size=5),
                           min_size=1, max_size=6))
    tree, ids = Stacks.from_lists(stacks)
    tids = draw(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=3, unique=True))
    rows = draw(st.lists(st.tuples(st.integers(0, len(stacks) - 1),
                                   st.integers(-1 if draw(st.booleans()) else 0, len(tids) - 1),
                                   st.integers(0, 10**12)), min_size=0, max_size=12))
    samples = Samples(stack=np.array([ids[s] for s, _, _ in rows], np.int32),
                      thread=np.array([t for _, t, _ in rows], np.int32),
                      values=np.array([[v] for _, _, v in rows], np.int64).reshape(-1, 1))
    threads = Threads(np.zeros(len(tids), np.uint32), np.array(tids, np.uint64))
    return Profile(Strings.from_texts(texts), table, tree, threads, samples)


OPTIONS = [dict(), dict(lines=False), dict(thread_prefix=False), dict(style="py-spy"),
           dict(style="py-spy", lines=False), dict(style="function")]


@settings(max_examples=60)
@given(profiles(), st.sampled_from(OPTIONS))
def test_round_trip(profile, options):
    text = dumps(profile, **options)
    read_options = {k: v for k, v in options.items() if k != "thread_prefix"}
    if options.get("lines") is False:
        read_options.setdefault("style", "cpython")
    back = read(text, **read_options)
    assert dumps(back, **options) == text
    assert back.weights().sum() == sum(int(x.rsplit(b" ", 1)[1]) for x in text.splitlines())


@settings(max_examples=30)
@given(profiles(files=NAME))
def test_round_trip_keeps_frames(profile):
    """py-spy's dialect carries the whole file name: file, function and line come back (a
    frame at line 0 as one without a location)."""
    back = read(dumps(profile, style="py-spy", thread_prefix=False))
    names = back.strings.texts()
    got = {(names[f], names[n], line) for f, n, line in zip(
        back.frames.filename, back.frames.funcname, back.frames.lineno.tolist(), strict=True)}
    texts = profile.strings.texts()
    used = {f for s in profile.samples.stack.tolist() for f in profile.stacks.tuples()[s]}
    want = set()
    for row in used:
        file = texts[profile.frames.filename[row]]
        line = int(profile.frames.lineno[row]) or -1  # (py-spy writes no line 0)
        want.add(("~", texts[profile.frames.funcname[row]], -1) if file == "~" else
                 (file, texts[profile.frames.funcname[row]], line))
    assert got == want


# -- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize("data, where", [
    (b"a;b 1\nno count here\n", "line 2"),
    (b"a;b 1\na;b 99999999999999999999\n", "line 2"),
    (b"tid:18446744073709551616;a 1\n", "line 1 -> tid"),
    (b"x.py:f:1 1\ny.py:g:99999999999 2\n", "line 2 -> frame"),
    ("a;b \u0661\n".encode(), "line 1"),              # a digit, but not an ASCII one
    (b"a " + b"9" * 5000 + b"\n", "line 1"),           # past int()'s digit limit
    (b" " * 200_000 + b"x 1\n" + b" " * 200_000 + b"x\n", "line 2"),  # no quadratic search
    (codecs.BOM_UTF16_LE + "a 1\n".encode("utf-16-le") + b"\x00\xdc", "text"),
])
def test_bad_input_names_the_line(data, where):
    with pytest.raises(FormatError) as caught:
        read(data)
    assert caught.value.path == where


@settings(max_examples=200)
@given(st.binary(max_size=200) | st.text(st.sampled_from("ab;: \t\r\n0123#/()~tid"),
                                         max_size=60).map(str.encode))
def test_arbitrary_input_raises_only_format_error(data):
    for errors in ("strict", "skip"):
        try:
            profile = read(data, errors=errors)
        except FormatError:
            continue
        dumps(profile)
        dumps(profile, style="py-spy")


def test_empty_and_comment_only_files():
    for data in (b"", b"\n\n", b"# nothing\n// here\n", codecs.BOM_UTF8):
        profile = read(data)
        assert len(profile.samples) == 0 and dumps(profile) == b""


def test_long_frames_with_many_separators_read():
    """Frame texts full of ':' and ' (' are parsed by partitions, in linear time."""
    for data in (b"a (" * 50_000 + b"b:1) 1\n", b":" * 100_000 + b"1 2\n",
                 b"x:" * 50_000 + b" 3\n"):
        assert int(read(data).weights().sum()) == int(data.rsplit(b" ", 1)[1])


def test_through_pprof_and_back(tmp_path):
    """CPython's output, read, written as pprof, read again: the same collapsed bytes."""
    golden = DATA_DIR / "threads_wall_zstd.collapsed.txt"
    tachyon_format.write(tachyon_format.read(golden), tmp_path / "p.pb.gz")
    assert dumps(tachyon_format.read(tmp_path / "p.pb.gz")) == golden.read_bytes()


def test_counts_adding_up_beyond_an_int64_are_refused():
    """Found by the hostile-input attack (issue 21): two lines of 2**63 - 1 aggregated to -2."""
    import pytest

    from tachyon_format import FormatError

    one = b"a;b 9223372036854775807\n"
    assert tachyon_format.read(one, format="collapsed").samples.values.tolist() == [[2**63 - 1]]
    with pytest.raises(FormatError, match="line 2: the counts add up"):
        tachyon_format.read(one + b"c 1\n", format="collapsed", aggregate=True)

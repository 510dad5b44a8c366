"""Anonymised profiles: each file path rewritten as the rules say (hypothesis over made-up
paths, bytes that are not UTF-8 included), every other string and column unchanged, the
original paths gone; real profiles still write and count the same."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format import Frames, Profile, Samples, Stacks, Strings, Threads
from tachyon_format.analysis import function_table
from tachyon_format.analysis.anonymize import anonymize, anonymize_path
from tests.helpers.paths import DATA_DIR

HOMES = [b"/home/alice", b"/Users/bob", b"/root", b"C:\\Users\\eve"]
segment = st.sampled_from([b"proj", b"lib", b"python3.15", b"site-packages", b"dist-packages",
                           b"x.py", b"\xff\xfe", b"caf\xc3\xa9", b"home"])


@st.composite
def paths(draw) -> bytes:
    head = draw(st.sampled_from([*HOMES, b"/usr", b"/opt/app", b"", b"<frozen"]))
    parts = draw(st.lists(segment, max_size=5))
    sep = b"\\" if head.startswith(b"C:") else b"/"
    return sep.join([head, *parts]) if parts else head


def expected(path: bytes, basename: bool) -> bytes:
    """The rules, written out step by step."""
    for sep in (b"/", b"\\"):
        parts = path.split(sep)
        hits = [i for i, p in enumerate(parts[:-1]) if p in (b"site-packages",
                                                              b"dist-packages")]
        if hits and len(parts) > 1:
            path = sep.join([b"<site-packages>", *parts[hits[0] + 1:]])
            break
    slash = path.split(b"/")
    back = path.split(b"\\")
    if len(slash) >= 3 and slash[0] == b"" and slash[1] in (b"home", b"Users") and slash[2]:
        path = b"/".join([b"~", *slash[3:]])
    elif len(slash) >= 2 and slash[0] == b"" and slash[1] == b"root":
        path = b"/".join([b"~", *slash[2:]])
    elif len(back) >= 3 and back[0][1:] == b":" and back[0][:1].isalpha() and (
            back[1] == b"Users" and back[2]):
        path = b"\\".join([b"~", *back[3:]])
    if basename:
        path = path.replace(b"\\", b"/").split(b"/")[-1]
    return path


@settings(max_examples=200)
@given(paths(), st.booleans())
def test_paths_follow_the_rules(path, basename):
    assert anonymize_path(path, basename=basename) == expected(path, basename)


@settings(max_examples=60)
@given(st.lists(paths(), min_size=1, max_size=6, unique=True),
       st.lists(st.sampled_from([b"main", b"f\xff", b"<module>"]), min_size=1, max_size=3),
       st.data())
def test_profiles_keep_every_other_string_and_column(files, names, data):
    raws = [*files, *names]
    n_frames = data.draw(st.integers(1, 6))
    pick = st.integers(0, len(raws) - 1)
    frames = Frames(
        filename=np.array(data.draw(st.lists(pick, min_size=n_frames, max_size=n_frames)),
                          np.uint32),
        funcname=np.array(data.draw(st.lists(pick, min_size=n_frames, max_size=n_frames)),
                          np.uint32),
        lineno=np.arange(n_frames, dtype=np.int32), end_lineno=np.full(n_frames, -1, np.int32),
        column=np.full(n_frames, -1, np.int32), end_column=np.full(n_frames, -1, np.int32),
        opcode=np.full(n_frames, -1, np.int16))
    stacks, ids = Stacks.from_lists([[i] for i in range(n_frames)])
    profile = Profile(Strings.from_raw(raws), frames, stacks,
                      Threads(np.zeros(1, np.uint32), np.ones(1, np.uint64)),
                      Samples(ids, np.zeros(n_frames, np.int32)))
    out = anonymize(profile)
    before, after = profile.strings.raws(), out.strings.raws()
    for row in range(n_frames):
        old_file = before[int(frames.filename[row])]
        assert after[int(out.frames.filename[row])] == anonymize_path(old_file)
        assert after[int(out.frames.funcname[row])] == before[int(frames.funcname[row])]
    as_file = set(frames.filename.tolist()) - set(frames.funcname.tolist())
    for index, raw in enumerate(before):
        if index not in as_file:  # (a string that is not only a file keeps its bytes)
            assert after[index] == raw
        elif anonymize_path(raw) != raw:
            assert raw not in after[:len(before)] or raw in [
                before[i] for i in range(len(before)) if i not in as_file]
    assert out.samples is profile.samples and out.stacks is profile.stacks


@pytest.mark.parametrize("name", ["threads_wall_zstd", "invalid_utf8_strings"])
def test_real_profiles_write_and_count_the_same(tmp_path, name):
    profile = tachyon_format.read(DATA_DIR / f"{name}.bin")
    out = anonymize(profile, prefixes=[("/app/", "<app>/"), ("/usr/lib/python3.15/",
                                                              "<stdlib>/")])
    texts = out.strings.texts()
    assert not any(t.startswith(("/app/", "/usr/lib/python3.15/")) for t in texts)
    assert function_table(out, "function").rows() == function_table(profile, "function").rows()
    target = tmp_path / "shared.bin"
    tachyon_format.write(out, target)
    back = tachyon_format.read(target)
    assert function_table(back, "line").rows() == function_table(out, "line").rows()
    files = {t for t in function_table(back, "file_function")["filename"].tolist()}
    assert all(not f.startswith("/app/") for f in files)

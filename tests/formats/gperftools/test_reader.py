"""Reading, held to pprof's own reading byte for byte.

* pprof's ``.string`` goldens (``Profile.String()`` of ``profile.Parse``) for every
  ``profile/testdata/*.cpu``, including the Java variant, and the same files re-encoded into
  the other word sizes and byte orders (same content, so the same golden);
* ``internal/driver/testdata/cppbench.cpu`` (the same capture with full paths) against the
  golden of its twin, and against Go;
* Go's ``profile.Parse`` + ``String()`` (tests/helpers/go_oracle.py) for all of those and the
  committed libprofiler profiles.
"""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest

import tachyon_format
from tachyon_format.errors import FormatError
from tachyon_format.formats.gperftools.facts import GperftoolsFacts
from tachyon_format.formats.gperftools.header import layout_of
from tachyon_format.formats.gperftools.reader import parse
from tachyon_format.schema import gperftools as G
from tests.helpers.libprofiler import COMMITTED, COMMITTED_PROFILES, PPROF_PROFILES, golden
from tests.helpers.pprof_text import go_profile_string

GOLDEN_NAMES = ["cppbench.cpu", "gobench.cpu", "go.crc32.cpu", "java.cpu"]
LAYOUTS = [(4, "<"), (4, ">"), (8, "<"), (8, ">")]


def recode(data: bytes, target: tuple[int, str]) -> bytes:
    """*data* with its binary part re-encoded into *target*'s words (``struct``, not ours)."""
    size, order, _ = layout_of(data)
    code = {4: "I", 8: "Q"}
    values = list(struct.unpack_from(f"{order}{len(data) // size}{code[size]}", data))
    at = G.HEADER_WORDS
    while values[at : at + 3] != [0, 1, 0]:
        at += 2 + values[at + 1]
    at += 3
    size_t, order_t = target
    return struct.pack(f"{order_t}{at}{code[size_t]}", *values[:at]) + data[at * size :]


@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_pprof_goldens_exactly(pprof_testdata, name):
    path = pprof_testdata / "profile" / "testdata" / name
    assert go_profile_string(tachyon_format.read(path)) == golden(path)


@pytest.mark.parametrize("name", ["gobench.cpu", "go.crc32.cpu", "java.cpu", "cppbench.cpu"])
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda v: f"{v}")
def test_goldens_in_every_layout(pprof_testdata, name, layout):
    path = pprof_testdata / "profile" / "testdata" / name
    try:
        data = recode(path.read_bytes(), layout)
    except struct.error:
        assert layout[0] == 4 and name == "cppbench.cpu"  # its addresses need 64 bits
        return
    profile = parse(data)
    assert profile.extras["gperftools"].layout.word_size == layout[0]
    assert profile.extras["gperftools"].layout.byte_order == layout[1]
    assert go_profile_string(profile) == golden(path)


def _base_names(text: str) -> str:
    """Mapping lines with each file reduced to its last path element."""
    return re.sub(r"^(\d+: \S+ )\S*/", r"\1", text, flags=re.M)


def test_full_paths_twin_reads_as_its_golden(pprof_testdata):
    twin = pprof_testdata / "internal" / "driver" / "testdata" / "cppbench.cpu"
    original = pprof_testdata / "profile" / "testdata" / "cppbench.cpu"
    ours = go_profile_string(tachyon_format.read(twin))
    assert ours != golden(original)
    assert _base_names(ours) == _base_names(golden(original))
    assert "/usr/grte/v3/lib64/libc-2.15.so" in ours


def test_go_reads_every_file_as_we_do(go_oracle):
    """Go's own ``profile.Parse`` on pprof's files, their re-encodings and libprofiler's."""
    paths = PPROF_PROFILES + COMMITTED_PROFILES
    out = go_oracle.workdir / "layouts"
    out.mkdir(exist_ok=True)
    for path in PPROF_PROFILES + COMMITTED_PROFILES:
        for size, order in LAYOUTS:
            try:
                data = recode(path.read_bytes(), (size, order))
            except struct.error:
                continue
            copy = out / f"{path.stem}-{size}{'le' if order == '<' else 'be'}.cpu"
            copy.write_bytes(data)
            paths.append(copy)
    expected = go_oracle.profile_strings(paths)
    for path, text in zip(paths, expected, strict=True):
        ours = go_profile_string(tachyon_format.read(path), columns=go_oracle.prints_columns)
        assert ours == text, path.name


# --- what the model holds -----------------------------------------------------------------------


def test_model_columns_of_a_cpp_profile(pprof_testdata):
    profile = tachyon_format.read(pprof_testdata / "profile" / "testdata" / "cppbench.cpu")
    assert [(t.type, t.unit) for t in profile.meta.sample_types] == [
        ("samples", "count"), ("cpu", "nanoseconds")]
    assert (profile.meta.period_type.type, profile.meta.period) == ("cpu", 10_000_000)
    assert profile.samples.values.shape == (len(profile.samples), 2)
    assert (profile.samples.values[:, 1] == profile.samples.values[:, 0] * 10_000_000).all()
    assert (profile.samples.thread == -1).all() and len(profile.threads) == 0
    frames = profile.frames
    assert frames.address.dtype == np.uint64 and (frames.mapping >= 0).all()
    assert set(frames.funcname.tolist()) == {0} and profile.strings[0] == ""
    assert (frames.lineno == -1).all()
    mappings = profile.mappings
    assert profile.strings[mappings.filename[0]] == "cppbench_server_main"
    inside = (mappings.start[frames.mapping] <= frames.address) & (
        frames.address < mappings.limit[frames.mapping])
    assert inside.all()
    facts = profile.extras["gperftools"]
    assert isinstance(facts, GperftoolsFacts)
    assert facts.header == (0, 3, 0, 10000, 0) and facts.text.startswith(b"00400000-")
    assert tachyon_format.info(profile)["period_us"] == 10000


def test_java_frames_are_named_from_the_symbol_section(pprof_testdata):
    profile = tachyon_format.read(pprof_testdata / "profile" / "testdata" / "java.cpu")
    names = [profile.strings[i] for i in profile.frames.funcname]
    assert names[:3] == ["GC", "Compile", "VM"]
    assert profile.strings[profile.frames.filename[3]] == "source.java"
    assert profile.frames.lineno[3] == 6 and profile.frames.lineno[7] == -1  # "(source.java:0)"
    assert (profile.frames.address == 0).all()  # pprof drops the pcs "for better merge"
    assert profile.extras["gperftools"].layout.variant == G.Variant.JAVA
    assert profile.extras["gperftools"].text.startswith(b"\n 0x00000003 GC\n")


def test_committed_libprofiler_profiles(go_oracle):
    """Profiles gperftools 2.10's libprofiler wrote (tests/data/gperftools/README.md)."""
    assert {p.name for p in COMMITTED_PROFILES} == {"libprofiler_mixed.prof",
                                                    "libprofiler_hot.prof"}
    for path, text in zip(COMMITTED_PROFILES, go_oracle.profile_strings(COMMITTED_PROFILES),
                          strict=True):
        assert go_profile_string(tachyon_format.read(path),
                                 columns=go_oracle.prints_columns) == text


def test_signal_frame_heuristic_on_a_real_hot_loop():
    """libprofiler 2.10 records no signal-handler frames, so in a one-path profile pprof's
    heuristic cuts the leaf's two callers; ``drop_signal_frames=False`` keeps them."""
    path = COMMITTED / "libprofiler_hot.prof"
    as_pprof = tachyon_format.read(path)
    kept = tachyon_format.read(path, drop_signal_frames=False)
    assert len(as_pprof.extras["gperftools"].dropped_frames) == 2
    assert kept.extras["gperftools"].dropped_frames == ()
    depth = as_pprof.stacks.depth()[as_pprof.samples.stack]
    assert (kept.stacks.depth()[kept.samples.stack] == depth + 2).all()
    mixed = tachyon_format.read(COMMITTED / "libprofiler_mixed.prof")
    assert mixed.extras["gperftools"].dropped_frames == ()
    binary = mixed.strings[mixed.mappings.filename[0]]
    assert binary.endswith("/cpu_work")  # pprof's main-binary guess, moved first


def test_periods_wrap_as_go_int64_and_counts_never_do():
    """Go multiplies the period by 1000 in int64 (a huge one wraps, as there); a count above
    2**63, or whose time does not fit, would be negative there too: it is refused here
    (issue 21), naming its record."""
    words = [0, 3, 0, 2**64 - 1, 0, 5, 1, 0x1234, 0, 1, 0]
    profile = parse(struct.pack("<11Q", *words))
    period = (((2**64 - 1) * 1000 + 2**63) % 2**64) - 2**63
    assert profile.meta.period == period == -1000
    assert profile.samples.values[0, 0] == 5
    words[5] = 2**63 + 5
    with pytest.raises(FormatError, match="record 0 counts"):
        parse(struct.pack("<11Q", *words))

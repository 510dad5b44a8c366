"""The verbs: format found by content, then by extension; clear words for what is not a
profile; ``info`` of a file and of a profile; ``validate`` never raises."""

from __future__ import annotations

import io

import pytest

import tachyon_format
from tachyon_format import FORMATS, FormatError
from tachyon_format.formats import format_for_extension
from tests.helpers.paths import DATA_DIR

GOLDEN = DATA_DIR / "threads_wall_zstd.bin"


def test_sniff_by_content_whatever_the_name(tmp_path):
    renamed = tmp_path / "profile.dat"
    renamed.write_bytes(GOLDEN.read_bytes())
    assert tachyon_format.sniff(renamed) == "tachyon"
    assert tachyon_format.sniff(GOLDEN.read_bytes()) == "tachyon"
    assert tachyon_format.sniff(b"nothing") is None
    assert len(tachyon_format.read(renamed).samples) > 0


def test_sources_bytes_path_and_stream_read_alike():
    by_path = tachyon_format.read(GOLDEN)
    by_bytes = tachyon_format.read(GOLDEN.read_bytes())
    with open(GOLDEN, "rb") as f:
        by_stream = tachyon_format.read(f)
    for other in (by_bytes, by_stream):
        assert other.samples.timestamp_us.tolist() == by_path.samples.timestamp_us.tolist()


def test_text_streams_are_refused():
    with pytest.raises(TypeError, match="binary mode"):
        tachyon_format.read(io.StringIO("HCAT"))


@pytest.mark.parametrize(("head", "words"), [
    (b"\x1f\x8b\x08\x00" + bytes(20), "gzip-compressed data"),
    (b"\x28\xb5\x2f\xfd" + bytes(20), "zstd-compressed data"),
    (bytes(64), "all-zero start"),
    (b'  {"shared": {}}', "JSON text"),
    (b"", "the file is empty"),
    (b"ABCDEFGH", "unknown magic 41 42 43 44"),
])
def test_unknown_input_says_what_it_looks_like(head, words):
    with pytest.raises(FormatError, match=words) as caught:
        tachyon_format.read(head)
    assert caught.value.offset == 0


def test_extension_decides_when_the_content_does_not(tmp_path):
    odd = tmp_path / "odd.bin"
    odd.write_bytes(b"XXXX" + bytes(100))
    with pytest.raises(FormatError, match="Invalid magic number"):  # the Tachyon reader's
        tachyon_format.read(odd)
    assert format_for_extension("A.TACHYON") is FORMATS["tachyon"]
    assert format_for_extension("a.txt") is None


def test_explicit_format_and_unknown_names():
    assert len(tachyon_format.read(GOLDEN, format="tachyon").samples) > 0
    with pytest.raises(ValueError, match="unknown format 'nope'"):
        tachyon_format.read(GOLDEN, format="nope")


def test_info_of_a_file_and_of_its_profile_agree():
    profile = tachyon_format.read(GOLDEN)
    assert tachyon_format.info(profile) == tachyon_format.info(GOLDEN)
    profile.extras.clear()
    with pytest.raises(ValueError, match="no file-level facts"):
        tachyon_format.info(profile)


def test_validate_never_raises(tmp_path):
    assert tachyon_format.validate(GOLDEN) == []
    assert "cannot read" in str(tachyon_format.validate(tmp_path / "absent.bin")[0])
    [problem] = tachyon_format.validate(b"nothing at all")
    assert problem.severity == "unreadable" and "not a profile" in problem.message
    [problem] = tachyon_format.validate(tmp_path)
    assert problem.message == "cannot read: Is a directory"


def test_write_picks_the_format(tmp_path):
    profile = tachyon_format.read(GOLDEN)
    for name in ("copy.bin", "copy.tachyon", "copy.unknown"):
        tachyon_format.write(profile, tmp_path / name)
        assert (tmp_path / name).read_bytes() == GOLDEN.read_bytes()
    with pytest.raises(ValueError, match="unknown format"):
        tachyon_format.write(profile, tmp_path / "x", format="nope")


def test_iter_batches_yields_what_was_decoded_before_an_error():
    data = bytearray(GOLDEN.read_bytes())
    whole = tachyon_format.read(GOLDEN)
    data[28] ^= 1  # a sample count the records do not match: found after the last batch
    got = []
    with pytest.raises(FormatError, match="Sample count mismatch"):
        for batch in tachyon_format.iter_batches(bytes(data), samples_per_batch=500):
            got.append(len(batch.samples))
    assert sum(got) == len(whole.samples)


def test_iter_batches_yields_the_records_before_a_bad_one():
    path = DATA_DIR / "threads_cpu_opcodes_raw.bin"  # uncompressed: region offsets are file's
    whole = tachyon_format.read(path)
    records = whole.extras["tachyon"].records
    k = len(records) // 2
    data = bytearray(path.read_bytes())
    data[64 + int(records.offset[k]) + 12] = 9  # an encoding that does not exist
    got = 0
    with pytest.raises(FormatError, match="Unknown stack encoding: 9"):
        for batch in tachyon_format.iter_batches(bytes(data), samples_per_batch=100):
            got += len(batch.samples)
    assert got == int(records.first_sample[k])


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_registered_verb_resolves(name):
    chosen = FORMATS[name]
    assert chosen.verb("sniff") is not None
    for verb in chosen.verbs:
        assert callable(chosen.verb(verb)), (name, verb)
    with pytest.raises(ValueError, match="unknown verb"):
        chosen.verb("transmogrify")


def test_importing_the_package_loads_neither_numpy_nor_construct():
    import subprocess
    import sys

    code = ("import sys, tachyon_format; "
            "print(sorted(m for m in ('numpy', 'construct') if m in sys.modules)); "
            "tachyon_format.Profile; tachyon_format.opcode_name; "
            "print(sorted(m for m in ('numpy', 'construct') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert out[:2] == ["[]", "['construct', 'numpy']"]


@pytest.mark.parametrize(("data", "what"), [(b"HC", "a Tachyon file"),
                                            (b"TAC", "a Tachyon file"),
                                            (b"\x1f", "gzip data")])
def test_a_cut_magic_says_so(data, what):
    """Found by the hostile-input attack (issue 21): two bytes of a Tachyon file were taken
    for a pprof message, and iter_batches raised a plain ValueError."""
    for verb in (tachyon_format.read, tachyon_format.iter_batches):
        with pytest.raises(tachyon_format.FormatError, match=f"too short for {what}"):
            list(verb(data)) if verb is tachyon_format.iter_batches else verb(data)
    assert "too short" in str(tachyon_format.validate(data)[0])


def test_iter_batches_of_a_format_read_whole_is_one_batch(tmp_path):
    pprof = tmp_path / "p.pb.gz"
    tachyon_format.convert(DATA_DIR / "threads_wall_zstd.bin", pprof)
    batches = list(tachyon_format.iter_batches(pprof, samples_per_batch=10))
    assert len(batches) == 1
    whole = tachyon_format.read(pprof)
    assert (batches[0].samples.values == whole.samples.values).all()

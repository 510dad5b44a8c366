"""``tachyon_format.convert``: every readable format to every writable one, totals kept;
gzip in and out, standard input and output, and what an unknown input is called."""

from __future__ import annotations

import gzip
import io
from collections import Counter

import pytest

import tachyon_format
from tachyon_format import FORMATS, FormatError
from tachyon_format.cli import main
from tests.helpers.paths import DATA_DIR

SOURCE = DATA_DIR / "threads_wall_zstd.bin"
KEEP_NAMES_NOT = {"gperftools"}
"""Formats whose files name no functions (addresses only): stacks compare by shape there."""
HOLDS_NO_STACKS = {"pstats"}
"""Formats whose reader only says why their files make no profile (per-function totals)."""
READERS = [name for name, f in FORMATS.items()
           if f.verbs.get("read") and name not in HOLDS_NO_STACKS]
WRITERS = [name for name, f in FORMATS.items() if f.verbs.get("write")]


def sample_total(profile) -> int:
    names = [v.type for v in profile.meta.sample_types]
    return int(profile.weights("samples" if "samples" in names else None).sum())


def stack_totals(profile, *, names: bool) -> Counter:
    """Samples per stack, the stack as its function names (or its depth) outermost last."""
    out: Counter = Counter()
    texts = profile.strings.texts()
    tuples = profile.stacks.tuples()
    weights = profile.weights("samples" if any(
        v.type == "samples" for v in profile.meta.sample_types) else None)
    for stack, weight in zip(profile.samples.stack.tolist(), weights.tolist(), strict=True):
        frames = tuples[stack] if stack >= 0 else ()
        key = (tuple(texts[profile.frames.funcname[f]] for f in frames) if names
               else len(frames))
        out[key] += int(weight)
    return Counter({k: v for k, v in out.items() if v})


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, object]:
    """The bundled Tachyon profile in every format that can both write and read it."""
    out = tmp_path_factory.mktemp("inputs")
    made = {"tachyon": SOURCE}
    for name in READERS:
        if name == "tachyon" or name not in WRITERS:
            continue
        path = out / FORMATS[name].file_name()
        tachyon_format.convert(SOURCE, path, to=name)
        made[name] = path
    return made


@pytest.mark.parametrize("to", WRITERS)
@pytest.mark.parametrize("from_", READERS)
def test_every_pair_converts_keeping_the_samples(inputs, from_, to, tmp_path):
    if from_ not in inputs:
        pytest.skip(f"no {from_} input: the library cannot write one to start from")
    source = tachyon_format.read(inputs[from_])
    destination = tmp_path / FORMATS[to].file_name("out")
    has_times = source.samples.timestamp_us is not None
    if FORMATS[to].timeline and not has_times:
        with pytest.raises(ValueError, match=r"(?i)time"):
            tachyon_format.convert(inputs[from_], destination, to=to)
        return
    assert tachyon_format.convert(inputs[from_], destination) == to  # by the extension
    assert tachyon_format.sniff(destination) == to
    if to not in READERS:
        return
    back = tachyon_format.read(destination)
    assert sample_total(back) == sample_total(source)
    names = not ({from_, to} & KEEP_NAMES_NOT)
    assert stack_totals(back, names=names) == stack_totals(source, names=names)


@pytest.mark.parametrize("name", sorted(HOLDS_NO_STACKS))
def test_a_file_without_stacks_says_so(name, tmp_path):
    path = tmp_path / FORMATS[name].file_name()
    tachyon_format.convert(SOURCE, path)
    with pytest.raises(FormatError, match="no stacks"):
        tachyon_format.convert(path, tmp_path / "out.pb.gz")


def test_a_timeline_output_is_made_from_every_sample(tmp_path):
    # (a Tachyon file back from Tachyon: the very bytes, so nothing was aggregated)
    tachyon_format.convert(SOURCE, tmp_path / "copy.bin")
    assert (tmp_path / "copy.bin").read_bytes() == SOURCE.read_bytes()


def test_an_output_without_a_timeline_is_made_from_counts(tmp_path):
    tachyon_format.convert(SOURCE, tmp_path / "out.pb.gz")
    full = tachyon_format.read(SOURCE)
    assert stack_totals(tachyon_format.read(tmp_path / "out.pb.gz"), names=True) == \
        stack_totals(full, names=True)
    aggregated = tachyon_format.read(SOURCE, aggregate=True)
    assert aggregated.samples.timestamp_us is None
    assert len(aggregated.samples) < len(full.samples)
    assert stack_totals(aggregated, names=True) == stack_totals(full, names=True)


def test_gzip_in_and_out(tmp_path):
    packed = tmp_path / "profile.bin.gz"
    packed.write_bytes(gzip.compress(SOURCE.read_bytes()))
    assert tachyon_format.sniff(packed) is None  # sniffing looks at the bytes as they are
    assert tachyon_format.convert(packed, tmp_path / "copy.bin.gz") == "tachyon"
    assert gzip.decompress((tmp_path / "copy.bin.gz").read_bytes()) == SOURCE.read_bytes()
    # two gzip members are one stream, as gunzip reads them
    data = SOURCE.read_bytes()
    two = gzip.compress(data[:100]) + gzip.compress(data[100:])
    assert tachyon_format.read(two).samples.stack.tolist() == \
        tachyon_format.read(SOURCE).samples.stack.tolist()


@pytest.mark.parametrize(("data", "words"), [
    (gzip.compress(b"hello"), "gzip-compressed data (inside: unknown magic 68 65 6c 6c)"),
    (gzip.compress(b""), "gzip-compressed data (inside: the file is empty)"),
    (gzip.compress(b'{"a": 1}'), "gzip-compressed data (inside: JSON text)"),
])
def test_gzip_of_something_else_says_what_is_inside(data, words):
    with pytest.raises(FormatError, match="not a profile this library reads") as raised:
        tachyon_format.convert(data, io.BytesIO(), to="pprof")
    assert words in str(raised.value)


@pytest.mark.parametrize("cut", [10, 30])
def test_broken_gzip_is_named_as_such(cut):
    data = gzip.compress(b"x" * 1000 + SOURCE.read_bytes())
    with pytest.raises(FormatError, match="gzip-compressed data"):
        tachyon_format.read(data[:cut] + b"\xff" * 20)


def test_file_objects_and_standard_output_need_a_format():
    with pytest.raises(ValueError, match="to=FORMAT"):
        tachyon_format.convert(SOURCE, io.BytesIO())
    with pytest.raises(ValueError, match="to=FORMAT"):
        tachyon_format.convert(SOURCE, "-")
    out = io.BytesIO()
    assert tachyon_format.convert(SOURCE, out, to="tachyon") == "tachyon"
    assert out.getvalue() == SOURCE.read_bytes()


def test_cli_convert_files_and_pipes(tmp_path, capfd, monkeypatch):
    out = tmp_path / "profile.pb.gz"
    assert main(["convert", str(SOURCE), str(out)]) == 0
    assert f"-> {out} (pprof)" in capfd.readouterr().err
    assert tachyon_format.sniff(out) == "pprof"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(SOURCE.read_bytes())))
    assert main(["convert", "-", str(tmp_path / "copy.bin")]) == 0
    assert (tmp_path / "copy.bin").read_bytes() == SOURCE.read_bytes()


def test_cli_writer_options_and_errors(tmp_path, capfd):
    out = tmp_path / "raw.pprof"
    assert main(["convert", str(SOURCE), str(out), "-O", "compression=none"]) == 0
    assert out.read_bytes()[:1] != b"\x1f"
    capfd.readouterr()
    bad = tmp_path / "bad.dat"
    bad.write_bytes(b"nothing here")
    assert main(["convert", str(bad), str(tmp_path / "x.pb.gz")]) == 1
    assert "not a profile this library reads" in capfd.readouterr().err
    with pytest.raises(SystemExit):
        main(["convert", str(SOURCE), "-", "--to", "no-such-format"])

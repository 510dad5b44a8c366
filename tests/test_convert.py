"""``tachyon_format.convert``: every readable format to every writable one, totals kept;
gzip in and out, standard input and output, and what an unknown input is called."""

from __future__ import annotations

import gzip
import io
import re
from collections import Counter

import pytest

import tachyon_format
from tachyon_format import FORMATS, FormatError
from tachyon_format.cli import main
from tests.helpers.paths import DATA_DIR

SOURCE = DATA_DIR / "threads_wall_zstd.bin"
KEEP_NAMES_NOT = {"gperftools"}
"""Formats whose files name no functions (addresses only): stacks compare by shape there."""
KEEP_EVERY_FRAME = {"collapsed": {"filter_internal": False}}
"""Writer options that keep frames CPython's own output drops (the profiler's
``_sync_coordinator.py`` frames), so that stacks compare whole."""
HOLDS_NO_STACKS = {"pstats"}
"""Formats whose reader only says why their files make no profile (per-function totals)."""
READERS = [name for name, f in FORMATS.items()
           if f.verbs.get("read") and name not in HOLDS_NO_STACKS]
WRITERS = [name for name, f in FORMATS.items() if f.verbs.get("write")]


FLAT = {"jsonl"}
"""Formats that keep per-frame totals, not stacks (CPython's JSONL): compare the leaves."""


def value_column(profile, unit: str | None = None) -> tuple[str, object]:
    """The unit and weights of the profile's default sample type, or of its first sample
    type measured in *unit* (samples/count when there is one)."""
    types = profile.meta.sample_types
    if unit is not None:
        chosen = next((v.type for v in types if v.unit == unit and v.type == "samples"),
                      next((v.type for v in types if v.unit == unit), None))
        assert chosen is not None, f"no sample type in {unit} among {types}"
        return unit, profile.weights(chosen)
    index = profile.meta.sample_type_index()
    return types[index].unit, profile.weights(types[index].type)


def stack_totals(profile, weights, *, names: bool, leaves: bool = False) -> Counter:
    """Weight per stack, the stack as its function names (or its depth), innermost first;
    only the innermost frame's name with *leaves*."""
    out: Counter = Counter()
    texts = profile.strings.texts()
    tuples = profile.stacks.tuples()
    for stack, weight in zip(profile.samples.stack.tolist(), weights.tolist(), strict=True):
        frames = tuples[stack] if stack >= 0 else ()
        if leaves:
            frames = frames[:1]
        key = (tuple(texts[profile.frames.funcname[f]] for f in frames) if names
               else len(frames))
        out[key] += int(weight)
    return Counter({k: v for k, v in out.items() if v})


def convert_asked(source, destination, **options) -> str:
    """``convert``, giving an option the writer asks for by name (``pass period_us=``) when
    the input lacks the fact (a speedscope file knows no sampling period)."""
    try:
        return tachyon_format.convert(source, destination, **options)
    except ValueError as exc:
        asked = re.search(r"pass (\w+)=", str(exc))
        if asked is None:
            raise
        return tachyon_format.convert(source, destination, **{asked.group(1): 1000}, **options)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, object]:
    """The bundled Tachyon profile in every format that can both write and read it."""
    out = tmp_path_factory.mktemp("inputs")
    made = {"tachyon": SOURCE}
    for name in READERS:
        if name == "tachyon" or name not in WRITERS:
            continue
        path = out / FORMATS[name].file_name()
        tachyon_format.convert(SOURCE, path, to=name, **KEEP_EVERY_FRAME.get(name, {}))
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
    assert convert_asked(inputs[from_], destination, **KEEP_EVERY_FRAME.get(to, {})) == to
    assert tachyon_format.sniff(destination) == to
    if to not in READERS:
        return
    back = tachyon_format.read(destination)
    units = [v.unit for v in back.meta.sample_types]
    unit = "count" if "count" in units else value_column(back)[0]
    back_weights, source_weights = value_column(back, unit)[1], value_column(source, unit)[1]
    assert int(back_weights.sum()) == int(source_weights.sum())
    names = not ({from_, to} & KEEP_NAMES_NOT)
    leaves = bool({from_, to} & FLAT)
    assert stack_totals(back, back_weights, names=names, leaves=leaves) == \
        stack_totals(source, source_weights, names=names, leaves=leaves)


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
    back = tachyon_format.read(tmp_path / "out.pb.gz")
    assert stack_totals(back, value_column(back, "count")[1], names=True) == \
        stack_totals(full, full.weights(), names=True)
    aggregated = tachyon_format.read(SOURCE, aggregate=True)
    assert aggregated.samples.timestamp_us is None
    assert len(aggregated.samples) < len(full.samples)
    assert stack_totals(aggregated, aggregated.weights(), names=True) == \
        stack_totals(full, full.weights(), names=True)


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

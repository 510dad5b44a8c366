"""Finding a gperftools header: the rule generated from the declaration
(``schema/gperftools_plain.py``) against the declaration itself, in all four layouts, and
what sniffing costs (no construct)."""

from __future__ import annotations

import struct
import subprocess
import sys

import construct as cs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.formats.gperftools.header import LAYOUTS, layout_of
from tachyon_format.schema import gperftools as G
from tachyon_format.specdoc import gperftools_plain as generator
from tests.helpers.paths import DATA_DIR, REPO

_CODE = {4: "I", 8: "Q"}


def words(word_size: int, order: str, *values: int) -> bytes:
    return struct.pack(f"{order}{len(values)}{_CODE[word_size]}", *values)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("variant", list(G.Variant))
def test_layout_of_finds_every_layout(layout, variant):
    head = words(*layout, 0, 3, variant, 10000, 0)
    assert layout_of(head) == (*layout, variant)
    assert layout_of(head[:-1]) is None  # a cut header is no header


@pytest.mark.parametrize("head", [
    b"", b"\0" * 64, b"HCAT\x01\0\0\0" + b"\0" * 56, b"\x1f\x8b\x08\0" + b"\0" * 36,
    b'{"shared": {}}' + b" " * 40, words(8, "<", 0, 3, 0, 0, 0), words(8, "<", 0, 3, 2, 1, 0),
    words(8, "<", 0, 2, 0, 1, 0), words(4, "<", 0, 3, 0, 1, 1), words(8, ">", 1, 3, 0, 1, 0),
])
def test_layout_of_rejects_other_starts(head):
    assert layout_of(head) is None


@settings(max_examples=300)
@given(st.sampled_from(LAYOUTS), st.lists(st.integers(0, 4), min_size=5, max_size=5))
def test_layout_of_agrees_with_the_header_declaration(layout, values):
    """Small words (0..4) hit every branch; the declarations are the oracle, tried in pprof's
    order (64-bit big-endian words 3, 1 read as a 32-bit header)."""
    head = words(*layout, *values)
    expected = None
    for candidate in LAYOUTS:
        try:
            parsed = G.header(*candidate).parse(head)
        except cs.ConstructError:
            continue
        expected = (*candidate, G.Variant[parsed.version])
        break
    assert layout_of(head) == expected


def test_the_generated_rule_is_what_the_declaration_gives():
    path = REPO / "src" / "tachyon_format" / "schema" / generator.MODULE
    assert path.read_text(encoding="utf-8") == generator.render_module(), (
        "schema/gperftools_plain.py is stale: run python tools/specgen.py")


def test_the_generator_refuses_a_field_it_cannot_state(monkeypatch):
    def header(word_size, order):
        w = G.word(word_size, order)
        return cs.Struct("header_count" / cs.Const(0, w), "num_header_slots" / cs.Int8ul,
                         "version" / w, "period_us" / w, "padding" / w)

    monkeypatch.setattr(G, "header", header)
    with pytest.raises(TypeError, match="'num_header_slots'"):
        generator.render_module()


def test_sniffing_a_file_of_another_format_loads_no_construct(tmp_path):
    """Every sniffer runs on a file that is none of the earlier formats; gperftools' used to
    import its declarations, and so construct, for every pprof file read."""
    script = ("import sys, tachyon_format\n"
              "assert tachyon_format.sniff(sys.argv[1]) == 'pprof'\n"
              "print('construct' in sys.modules)")
    source = tmp_path / "profile.pb.gz"
    tachyon_format.convert(DATA_DIR / "threads_wall_zstd.bin", source)
    run = subprocess.run([sys.executable, "-c", script, str(source)], capture_output=True,
                         text=True, env={"PYTHONPATH": str(REPO / "src"), "PATH": ""})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"

"""docs/formats/*.md: the code blocks run, and the pprof page's tables say what the code does."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re

import pytest

import tachyon_format
from tachyon_format.formats.pprof.writer import dumps
from tests.helpers.paths import DATA_DIR, REPO

PAGE = REPO / "docs" / "formats" / "pprof.md"
TEXT = PAGE.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_code_blocks_run(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    profile = tachyon_format.read(DATA_DIR / "threads_cpu_opcodes_raw.bin")
    (tmp_path / "cpu.pb.gz").write_bytes(dumps(profile))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(BLOCKS[index], f"{PAGE.name} block {index}", "exec"), {})
    for line in BLOCKS[index].splitlines():  # a shown output must be what prints
        if "print(" in line and "#" in line:
            shown = line.split("#", 1)[1].strip().replace("(...)", "")
            assert all(part in out.getvalue() for part in shown.split() if part), line


def test_the_mapping_table_names_every_frame_column():
    table = TEXT.split("## What a Tachyon profile keeps in pprof", 1)[1].split("\n## ", 1)[0]
    for field in dataclasses.fields(tachyon_format.Frames):
        if field.name in ("address", "mapping", "filename", "funcname"):
            continue  # native-code columns; names are in the "frame file, function" row
        assert f"`{field.name}`" in table, field.name


def test_options_table_matches_the_writer():
    import inspect

    from tachyon_format.formats.pprof import writer

    documented = set(re.findall(r"^\| `(\w+)`", TEXT.split("## Options", 1)[1].split(
        "\n## ", 1)[0], flags=re.M))
    documented |= {"drop_frames", "keep_frames", "default_sample_type", "doc_url"}
    accepted = set(inspect.signature(writer.encode).parameters) | {"compression", "level"}
    accepted -= {"profile"}
    assert accepted <= documented


def test_links_resolve():
    for target in re.findall(r"\]\(([^)#]+)", TEXT):
        if not target.startswith("http"):
            assert (PAGE.parent / target).resolve().exists(), target

"""docs/formats/index.md: its table of formats is the registry, its matrix has a column per
format, its Python example runs and its shell examples are valid command lines."""

from __future__ import annotations

import re
import shlex

import pytest

import tachyon_format
from tachyon_format import FORMATS
from tachyon_format.cli.main import build_parser
from tests.helpers.paths import DATA_DIR, REPO

PAGE = REPO / "docs" / "formats" / "index.md"
TEXT = PAGE.read_text(encoding="utf-8")


def table(heading: str) -> list[list[str]]:
    section = TEXT.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in section.splitlines() if line.startswith("|")]
    return [row for row in rows if not set("".join(row)) <= set("-: ")]


def test_the_formats_table_is_the_registry():
    header, *rows = table("The formats")
    assert header[:4] == ["format", "read", "write", "file names"]
    assert [row[0].strip("`") for row in rows] == list(FORMATS)  # and in sniffing order
    for name, read, write, names, page in rows:
        f = FORMATS[name.strip("`")]
        reads = f.verbs.get("read") is not None and name.strip("`") != "pstats"
        assert read.startswith("yes") == reads, name
        assert (write == "yes") == (f.verbs.get("write") is not None), name
        assert [n.strip("` ") for n in names.split(",")] == list(f.extensions), name
        link = re.search(r"\]\(([^)#]+)", page).group(1)
        assert (PAGE.parent / link).exists(), link


def test_the_matrix_has_a_column_per_format():
    header, *rows = table("What a conversion keeps")
    assert sorted(header[1:]) == sorted(FORMATS)
    assert all(len(row) == len(header) for row in rows)


def test_python_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "profile.bin").write_bytes((DATA_DIR / "threads_wall_zstd.bin").read_bytes())
    (block,) = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)
    exec(compile(block, PAGE.name, "exec"), {})
    assert tachyon_format.sniff(tmp_path / "profile.pb.gz") == "pprof"
    assert tachyon_format.sniff(tmp_path / "flame.txt") == "collapsed"


@pytest.mark.parametrize("line", [line for block in re.findall(r"```sh\n(.*?)```", TEXT, re.S)
                                  for line in block.splitlines() if line.strip()])
def test_shell_examples_parse(line):
    words = shlex.split(line.split("|")[0].split("#")[0])
    assert words[0] == "tachyon-format"
    args = build_parser().parse_args(words[1:])
    assert args.run is not None

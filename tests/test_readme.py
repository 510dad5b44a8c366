"""The README's examples run, and its commands exist."""

from __future__ import annotations

import re
from pathlib import Path

import tachyon_format
from tests.helpers.paths import DATA_DIR, REPO

README = (REPO / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def test_writer_example_runs_and_reads_back(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (block,) = [b for b in BLOCKS if "import Writer" in b]
    exec(compile(block, "README.md", "exec"), {})
    profile = tachyon_format.read("out.bin")
    facts = tachyon_format.info(profile)
    assert facts["mode"] == 1 and facts["sample_rate"] == 1000.0
    names = [profile.strings[profile.frames.funcname[f]]
             for f in profile.stack_frames(profile.samples.stack[0])]
    assert names == ["work", "main"]


def test_reading_example_runs_on_a_bundled_profile(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bundled = DATA_DIR / "threads_wall_zstd.bin"
    (tmp_path / "profile.bin").write_bytes(bundled.read_bytes())
    (tmp_path / "huge.bin").write_bytes(bundled.read_bytes())
    blocks = [b for b in BLOCKS if "tachyon_format.read(" in b]
    assert len(blocks) == 2  # reading, then converting
    namespace: dict = {}
    for block in blocks:
        block = block.replace("profile.samples_df(), profile.frames_df(), profile.to_arrow()",
                              "")
        exec(compile(block, "README.md", "exec"), namespace)
    assert (tmp_path / "copy.bin").read_bytes() == bundled.read_bytes()


def test_readme_commands_are_the_dev_script():
    assert "bash tools/dev.sh example" in README and "bash tools/dev.sh test" in README
    ci = (REPO / ".ci" / "run").read_text()
    assert "bash tools/dev.sh test" in ci


def _layout_rows() -> list[tuple[str, str]]:
    section = README.split("## Layout", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`"):
            rows.append((cells[0], cells[1]))
    return rows


def test_layout_table_names_every_part_of_the_package():
    named = " ".join(path for path, _ in _layout_rows())
    package = REPO / "src" / "tachyon_format"
    for child in sorted(package.iterdir()):
        if child.name.startswith(".") or child.name in ("__pycache__", "__main__.py",
                                                         "py.typed"):
            continue
        label = f"src/tachyon_format/{child.name}" + ("/" if child.is_dir() else "")
        assert label in named or child.name in named, f"{label} is not in the layout table"


def test_layout_table_names_only_files_that_exist():
    for path_cell, what in _layout_rows():
        paths = re.findall(r"`([^`]+)`", path_cell)
        for path in paths:  # a bare name is beside the first path
            full = path if "/" in path else str(Path(paths[0]).parent / path)
            assert (REPO / full).exists(), full
        base = re.findall(r"`([^`]+/)`", path_cell)
        if len(base) == 1:  # files named in the description live under the row's directory
            for name in re.findall(r"`([\w/]+\.(?:py|sh|md))`", what):
                found = list((REPO / base[0]).rglob(Path(name).name))
                assert found, f"{name} (under {base[0]}) does not exist"


def test_command_line_examples_parse():
    import shlex

    from tachyon_format.cli.main import build_parser

    lines = [line for block in re.findall(r"```sh\n(.*?)```", README, flags=re.S)
             for line in block.splitlines() if line.startswith("tachyon-format ")]
    assert len(lines) >= 8
    for line in lines:
        words = shlex.split(line.split("|")[0].split("#")[0])
        assert build_parser().parse_args(words[1:]).run is not None, line

"""The README's examples run, and its commands exist."""

from __future__ import annotations

import re

import tachyon_format
from tests.helpers.paths import DATA_DIR, REPO

README = (REPO / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def test_writer_example_runs_and_reads_back(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (block,) = [b for b in BLOCKS if "import Writer" in b]
    exec(compile(block, "README.md", "exec"), {})
    profile = tachyon_format.read("out.bin")
    assert profile.info["mode"] == 1 and profile.info["sample_rate"] == 1000.0
    names = [profile.strings[profile.frames.funcname[f]]
             for f in profile.stack_frames(profile.samples.stack[0])]
    assert names == ["work", "main"]


def test_reading_example_runs_on_a_bundled_profile(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bundled = DATA_DIR / "threads_wall_zstd.bin"
    (tmp_path / "profile.bin").write_bytes(bundled.read_bytes())
    (tmp_path / "huge.bin").write_bytes(bundled.read_bytes())
    (block,) = [b for b in BLOCKS if "tachyon_format.read(" in b]
    block = block.replace("profile.samples_df(), profile.frames_df(), profile.to_arrow()", "")
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)
    assert (tmp_path / "copy.bin").read_bytes() == bundled.read_bytes()


def test_readme_commands_are_the_dev_script():
    assert "bash tools/dev.sh example" in README and "bash tools/dev.sh test" in README
    ci = (REPO / ".ci" / "run").read_text()
    assert "bash tools/dev.sh test" in ci

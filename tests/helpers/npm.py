"""npm packages as test oracles, run under Node.

``tools/dev.sh test`` installs them into ``~/.cache/tachyon-format/npm`` (``$TACHYON_NPM_PREFIX``
overrides it), never into the repository. Tests that need one skip, with the reason, when
Node or the package (at the pinned version) is absent.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

NPM_PREFIX = Path(os.environ.get("TACHYON_NPM_PREFIX", "~/.cache/tachyon-format/npm")).expanduser()


def npm_package(name: str, version: str) -> tuple[str, Path] | str:
    """(node, the package's directory), or the reason there is none."""
    node = shutil.which("node")
    if node is None:
        return f"no `node` on PATH (npm {name} runs under Node)"
    package = NPM_PREFIX / "node_modules" / name
    try:
        found = json.loads((package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return f"npm package {name} not installed under {NPM_PREFIX} (tools/dev.sh test)"
    if found != version:
        return f"npm {name} {found} installed, the tests pin {version}"
    return node, package


def run_node_lines(node: str, script: Path, *args: str) -> list[dict]:
    """Run *script* with *args*; its stdout as one JSON value per line."""
    run = subprocess.run([node, str(script), *args], capture_output=True, text=True,
                         timeout=600)
    if run.returncode != 0:
        raise AssertionError(f"{script.name} failed: {run.stderr[-2000:]}")
    return [json.loads(line) for line in run.stdout.splitlines()]


def require(found: tuple[str, Path] | str) -> tuple[str, Path]:
    if isinstance(found, str):
        pytest.skip(found)
    return found

"""The scripts under ``tools/`` as modules (tools/ is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from .paths import REPO

TOOLS = REPO / "tools"


def load_tool(name: str, path: Path) -> ModuleType:
    """The script at *path* as the module *name* (loaded once: registered in
    ``sys.modules``, which dataclasses and typing look modules up in)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

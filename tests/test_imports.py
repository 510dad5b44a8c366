"""Imports flow one way: ``cli -> tachyon_format (the public names) -> _api -> formats/render
-> model/schema -> kernels``, and no module imports another that (directly or not) imports it
back.

Every import counts: at module level, inside functions and under ``TYPE_CHECKING``. The
layers are those of the README's layout table.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

PACKAGE = "tachyon_format"
SRC = REPO / "src" / PACKAGE

LAYER = {
    "errors": 0,
    "kernels": 0,
    "schema": 1,
    "model": 1,
    "formats": 2,
    "render": 2,
    "_api": 3,
    "compat": 3,
    "__init__": 4,
    "cli": 5,
    "__main__": 6,
}
"""Each top-level part of the package; a module may import parts of lower layers and its own
part, never a part of its own layer or above (so ``render`` and ``formats`` know nothing of
each other, and ``model`` knows no format)."""


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(SRC.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that *path* imports (anywhere in the file)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # `from pkg import module` imports the module; `from module import name` the module
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source
                       for a in node.names]
        else:
            continue
        found.update(t for t in targets if t == PACKAGE or t.startswith(PACKAGE + "."))
    return found - {name}


def part(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def upward_imports(graph: dict[str, set[str]], name: str) -> list[str]:
    here = part(name)
    return sorted(target for target in graph[name]
                  if part(target) != here and LAYER[part(target)] >= LAYER[here])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in graph:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


GRAPH = {name: imports_of(name, path, set(modules())) for name, path in modules().items()}


def test_every_part_has_a_layer():
    assert {part(name) for name in GRAPH} <= set(LAYER)


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_imports_go_down_the_layers(name):
    assert not upward_imports(GRAPH, name), f"{name} imports {upward_imports(GRAPH, name)}"


def test_no_cycles():
    assert not cycles(GRAPH)


def test_the_checks_catch_a_cycle_and_an_upward_import():
    made_up = {"tachyon_format.model.a": {"tachyon_format.formats.b"},
               "tachyon_format.formats.b": {"tachyon_format.formats.c"},
               "tachyon_format.formats.c": {"tachyon_format.formats.b"}}
    assert upward_imports(made_up, "tachyon_format.model.a") == ["tachyon_format.formats.b"]
    assert cycles(made_up) == [["tachyon_format.formats.b", "tachyon_format.formats.c"]]

"""How the region decoder's modules and the kernels may depend on each other (an AST test).

* ``kernels/`` import numpy and each other only: they know nothing of Tachyon.
* ``formats/tachyon/region/`` imports only itself, the kernels, the schema and the errors:
  never the file-level reader, writer or compat layers.
* Within ``region/`` imports go one way (no cycle, not even under TYPE_CHECKING).
* No module reads another object's private attributes (``x._name`` but for self and cls,
  and a NamedTuple's ``_replace``).
* No module over 500 lines without a line in its docstring on why.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tachyon_format

PACKAGE = Path(tachyon_format.__file__).parent
REGION = PACKAGE / "formats" / "tachyon" / "region"
KERNELS = PACKAGE / "kernels"
MODULES = sorted(REGION.glob("*.py")) + sorted(KERNELS.glob("*.py"))
ALLOWED = {  # package-internal imports each directory may make
    REGION: ("tachyon_format.formats.tachyon.region", "tachyon_format.kernels",
             "tachyon_format.schema", "tachyon_format.errors"),
    KERNELS: ("tachyon_format.kernels",),
}
MAX_LINES = 500
NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make"}  # public, despite the "_"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module *path* imports, anywhere in it, as absolute names."""
    package = module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # (maybe modules)
    return found


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_imports_stay_inside_their_layer(path):
    allowed = ALLOWED[path.parent]
    for name in imports(path):
        if name.startswith("tachyon_format"):
            assert name.startswith(allowed), f"{module_name(path)} imports {name}"
    if path.parent == REGION:
        for layer in ("reader", "writer", "compat", "encoder", "file"):
            assert not any(name.startswith(f"tachyon_format.formats.tachyon.{layer}")
                           for name in imports(path)), (module_name(path), layer)


def test_region_imports_go_one_way():
    modules = {module_name(p): p for p in sorted(REGION.glob("*.py"))}
    graph = {name: {m for m in imports(path) if m in modules and m != name}
             for name, path in modules.items()}
    done: set[str] = set()

    def visit(name: str, trail: tuple[str, ...]) -> None:
        assert name not in trail, "import cycle: " + " -> ".join((*trail, name))
        if name in done:
            return
        for dep in graph[name]:
            visit(dep, (*trail, name))
        done.add(name)

    for name in graph:
        visit(name, ())
    scan = "tachyon_format.formats.tachyon.region.scan"  # the reference stands alone
    assert graph[scan] <= {f"tachyon_format.formats.tachyon.region.{m}"
                           for m in ("records", "threads", "columns")}


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_no_private_attribute_of_another_object(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__") and node.attr not in NAMEDTUPLE_API):
            owner = node.value
            assert isinstance(owner, ast.Name) and owner.id in ("self", "cls"), (
                f"{module_name(path)}:{node.lineno} reads .{node.attr}")


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_modules_stay_short_or_say_why(path):
    lines = len(path.read_text().splitlines())
    if lines > MAX_LINES:
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        assert f"over {MAX_LINES} lines" in doc.lower(), f"{module_name(path)}: {lines} lines"

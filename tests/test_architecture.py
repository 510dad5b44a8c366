"""The package's architecture, as tests (AST only: nothing is imported).

* Imports flow one way, down the layers of the README's layout table:
  ``cli -> fleet -> tachyon_format (the public names) -> _api -> formats / render -> model ->
  kernels -> schema``; a module may import its own part and lower layers, never a part of its own
  layer or above (so ``render`` and ``formats`` know nothing of each other).
* ``kernels/`` know nothing of any format: they import numpy, each other and the format-free
  primitives of ``schema/primitives.py`` and ``schema/leb128.py`` only. ``model/`` imports
  only itself, the kernels and ``_lazy`` (the names that load on first use).
* ``formats/tachyon/region/`` never imports the file-level reader, writer or ``cpython_api``, and
  its reference decoder (``scan.py``) stands alone.
* A format imports no other format: what two share lives in ``formats/sources.py``, the model
  or ``kernels/``. A format reads only its own schema and the format-free ones, and what is
  not one format's (``render/``, ``analysis/``) reads no format's schema: a pprof write must
  not load the Tachyon schema for what the model's ``status`` column means.
* A private module (``_api``) is imported only from its own package: the command line and
  ``fleet/`` go through the public verbs. The command line reaches into no format's package
  and takes from ``tachyon_format`` only the names it exports.
* No import cycle anywhere (imports inside functions and under ``TYPE_CHECKING`` count).
* No module reads another object's private attributes (``x._name`` but for self and cls,
  and a NamedTuple's ``_replace``...).
* No module over 500 lines without a line in its docstring on why.
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
    "_lazy": 0,
    "problems": 1,
    "schema": 0,
    "kernels": 1,
    "model": 2,
    "formats": 3,
    "render": 3,
    "analysis": 3,
    "specdoc": 3,
    "_api": 4,
    "compat": 4,
    "__init__": 5,
    "fleet": 6,  # above the public names: it reads files with tachyon_format.read, as users do
    "cli": 7,
    "testing": 6,
    "__main__": 8,
}
"""Each top-level part of the package and its layer."""
ONLY = {
    "kernels": ("tachyon_format.kernels", "tachyon_format.schema.primitives",
                "tachyon_format.schema.leb128"),
    "model": ("tachyon_format.model", "tachyon_format.kernels", "tachyon_format._lazy"),
    "analysis": ("tachyon_format.analysis", "tachyon_format.model", "tachyon_format.kernels",
                 "tachyon_format.errors"),
}
"""Parts that may import only these (beyond numpy and the standard library)."""
UPWARD_IMPORTS_ALLOWED = {
    ("tachyon_format.schema.tachyon", "tachyon_format.model.thread_status"),
}
"""The schema documents the model's status bits (``ThreadStatus``, an enum and nothing
else: see :func:`test_the_status_bits_are_the_model_s`)."""
REGION = "tachyon_format.formats.tachyon.region"
NOT_FROM_REGION = tuple(f"tachyon_format.formats.tachyon.{m}"
                        for m in ("reader", "writer", "cpython_api", "encoder", "file"))
MAX_LINES = 500
NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make"}  # public, despite the "_"


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(SRC.rglob("*.py"))}


def imports_of(name: str, path: Path) -> set[str]:
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
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in MODULES else source
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
    wrong = {target for target in graph[name]
             if part(target) != here and LAYER[part(target)] >= LAYER[here]
             and (name, target) not in UPWARD_IMPORTS_ALLOWED}
    if here in ONLY:
        wrong |= {target for target in graph[name] if not target.startswith(ONLY[here])}
    return sorted(wrong)


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


GRAPH = {name: imports_of(name, path) for name, path in MODULES.items()}


def test_every_part_has_a_layer():
    assert {part(name) for name in GRAPH} <= set(LAYER)


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_imports_go_down_the_layers(name):
    assert not upward_imports(GRAPH, name), f"{name} imports {upward_imports(GRAPH, name)}"


def test_no_cycles():
    assert not cycles(GRAPH)


def test_the_region_stays_below_the_file_layer():
    for name, targets in GRAPH.items():
        if name.startswith(REGION):
            assert not {t for t in targets if t.startswith(NOT_FROM_REGION)}, name
    scan_imports = {t for t in GRAPH[f"{REGION}.scan"] if t.startswith(REGION)}
    assert scan_imports <= {f"{REGION}.{m}" for m in ("records", "threads", "columns",
                                                       "layout", "replay_checks")}


def test_the_checks_catch_a_cycle_and_an_upward_import():
    made_up = {"tachyon_format.model.a": {"tachyon_format.formats.b"},
               "tachyon_format.formats.b": {"tachyon_format.formats.c"},
               "tachyon_format.formats.c": {"tachyon_format.formats.b"},
               "tachyon_format.kernels.d": {"tachyon_format.schema.tachyon"}}
    assert upward_imports(made_up, "tachyon_format.model.a") == ["tachyon_format.formats.b"]
    assert upward_imports(made_up, "tachyon_format.kernels.d") == ["tachyon_format.schema.tachyon"]
    assert cycles(made_up) == [["tachyon_format.formats.b", "tachyon_format.formats.c"]]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_attribute_of_another_object(name):
    for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__") and node.attr not in NAMEDTUPLE_API):
            owner = node.value
            assert isinstance(owner, ast.Name) and owner.id in ("self", "cls"), (
                f"{name}:{node.lineno} reads .{node.attr}")


PRIVATE_IMPORTS_ALLOWED = {
    ("tachyon_format.formats.tachyon.region.walk", "_cython_shadow"),  # (its own stand-in)
    ("tachyon_format.formats.pprof.writer", "_zstd"),
}
"""Private names imported across modules: each a module's own helper."""


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_name_of_another_module(name):
    """``from x import _y`` reaches into another module's insides (the command line used to
    take ``top._plain``): a shared helper belongs in a module of its own, by a public name."""
    for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                assert not private or (name, alias.name) in PRIVATE_IMPORTS_ALLOWED, (
                    f"{name}:{node.lineno} imports {alias.name}")


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_stay_short_or_say_why(name):
    text = MODULES[name].read_text(encoding="utf-8")
    lines = len(text.splitlines())
    if lines > MAX_LINES:
        doc = ast.get_docstring(ast.parse(text)) or ""
        assert f"over {MAX_LINES} lines" in doc.lower(), f"{name}: {lines} lines"


FORMATS_SHARED = ("tachyon_format.formats", "tachyon_format.formats.sources")
"""The parts of ``formats/`` that belong to no one format (the registry, the sources)."""


def format_of(name: str) -> str | None:
    """The format a module of ``formats/<format>/`` belongs to; None elsewhere."""
    parts = name.split(".")
    if len(parts) < 3 or parts[1] != "formats" or name in FORMATS_SHARED:
        return None
    return parts[2]


def schema_format(name: str) -> str | None:
    """The format a schema module declares (``schema/pprof_wire.py``: pprof); None for the
    format-free ones (primitives, LEB128, the plain-struct helpers, CPython's opcodes)."""
    if not name.startswith("tachyon_format.schema."):
        return None
    stem = name.split(".")[2]
    return next((f for f in ("tachyon", "pprof", "gperftools") if stem.startswith(f)), None)


SCHEMA_IMPORTS_ALLOWED: set[tuple[str, str]] = set()
"""Known exceptions, each with the reason it is one (none today)."""


def other_formats(graph: dict[str, set[str]], name: str) -> list[str]:
    """What *name* imports of another format's modules or schema."""
    mine = format_of(name)
    neutral = part(name) in ("render", "analysis", "model", "kernels")
    if mine is None and not neutral:
        return []
    return sorted(target for target in graph[name]
                  if (mine is not None and format_of(target) not in (None, mine))
                  or (schema_format(target) not in (None, mine)
                      and (name, target) not in SCHEMA_IMPORTS_ALLOWED))


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_a_format_imports_no_other_format(name):
    assert not other_formats(GRAPH, name), f"{name} imports {other_formats(GRAPH, name)}"


def test_the_format_check_catches_a_format_reaching_into_another():
    made_up = {"tachyon_format.formats.gecko.writer": {"tachyon_format.formats.jsonl.view",
                                                       "tachyon_format.formats.sources",
                                                       "tachyon_format.formats.gecko.tables"},
               "tachyon_format.formats.pprof.writer": {"tachyon_format.schema.tachyon_values",
                                                       "tachyon_format.schema.pprof",
                                                       "tachyon_format.schema.leb128"},
               "tachyon_format.render.timeline": {"tachyon_format.schema.tachyon"}}
    assert other_formats(made_up, "tachyon_format.formats.gecko.writer") == [
        "tachyon_format.formats.jsonl.view"]
    assert other_formats(made_up, "tachyon_format.formats.pprof.writer") == [
        "tachyon_format.schema.tachyon_values"]
    assert other_formats(made_up, "tachyon_format.render.timeline") == [
        "tachyon_format.schema.tachyon"]


def test_the_status_bits_are_the_model_s():
    """``ThreadStatus`` is declared once, in the model, by a module that imports nothing of
    the package (the schema may import it without loading the model's numpy columns... or
    anything else of the model's)."""
    declared = [name for name, path in MODULES.items()
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.ClassDef) and node.name == "ThreadStatus"]
    assert declared == ["tachyon_format.model.thread_status"]
    assert not GRAPH["tachyon_format.model.thread_status"]


PRIVATE_MODULES_ALLOWED: set[tuple[str, str]] = set()
"""Known exceptions, each with the reason it is one (none today)."""


def private_module_imports(graph: dict[str, set[str]], name: str) -> list[str]:
    """Private modules (``_api``) that *name* imports from outside their own package: only
    the package itself and its own modules may."""
    wrong = []
    for target in graph[name]:
        home, _, leaf = target.rpartition(".")
        if leaf.startswith("_") and not leaf.startswith("__"):
            own = name == home or name.rpartition(".")[0] == home
            if not own and (name, target) not in PRIVATE_MODULES_ALLOWED:
                wrong.append(target)
    return sorted(wrong)


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_private_modules_stay_in_their_package(name):
    assert not private_module_imports(GRAPH, name), (
        f"{name} imports {private_module_imports(GRAPH, name)}")


def test_the_private_module_check_catches_the_fleet_reaching_into_the_verbs():
    made_up = {"tachyon_format.fleet.partials": {"tachyon_format._api", "tachyon_format"},
               "tachyon_format": {"tachyon_format._api"},
               "tachyon_format.formats.tachyon.region.walk": {
                   "tachyon_format.formats.tachyon.region._cython_shadow"}}
    assert private_module_imports(made_up, "tachyon_format.fleet.partials") == [
        "tachyon_format._api"]
    assert private_module_imports(made_up, "tachyon_format") == []
    assert private_module_imports(made_up, "tachyon_format.formats.tachyon.region.walk") == []


CLI = "tachyon_format.cli"


def public_names() -> set[str]:
    """What ``tachyon_format`` exports (its ``__all__``), and its public parts."""
    tree = ast.parse((SRC / "__init__.py").read_text(encoding="utf-8"))
    exported = next(ast.literal_eval(node.value) for node in tree.body
                    if isinstance(node, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets))
    parts = {p for p in LAYER if not p.startswith("_")} - {"__init__", "cli", "testing"}
    return set(exported) | parts | {"__version__"}


def cli_private_uses(text: str, targets: set[str]) -> list[str]:
    """What a command-line module (its source *text*, the package modules it imports
    *targets*) takes that is not public: a format's own modules, a private module, or a name
    of ``tachyon_format`` that the package does not export."""
    public = public_names()
    wrong = [t for t in targets if format_of(t) is not None
             or any(p.startswith("_") and not p.startswith("__") for p in t.split("."))]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module == PACKAGE and not node.level:
            wrong += [a.name for a in node.names if a.name not in public]
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.value.id == PACKAGE and node.attr not in public):
            wrong.append(f"{PACKAGE}.{node.attr}")
    return sorted(wrong)


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith(CLI)))
def test_the_command_line_uses_public_names_only(name):
    wrong = cli_private_uses(MODULES[name].read_text(encoding="utf-8"), GRAPH[name])
    assert not wrong, f"{name} uses {wrong}"


def test_the_command_line_check_catches_a_reach_into_a_format():
    text = ("import tachyon_format\n"
            "from tachyon_format import read, iter_records\n"
            "from tachyon_format.formats.tachyon.header_info import MODE_NAMES\n"
            "tachyon_format.write(tachyon_format.read('a'), 'b')\n"
            "tachyon_format._api.read('a')\n")
    targets = {"tachyon_format", "tachyon_format.formats.tachyon.header_info"}
    assert cli_private_uses(text, targets) == [
        "iter_records", "tachyon_format._api", "tachyon_format.formats.tachyon.header_info"]

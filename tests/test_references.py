"""Every reference in the package's text, the tools and the docs leads somewhere (AST and
text only).

* A dotted name ``tachyon_format.x.y`` names a module of the package, or a name that module
  defines (and, for a class, one of its attributes): a module renamed or removed leaves no
  docstring or page pointing at it (the ``tachyon_format.codec`` package was gone long before
  its last mention).
* A path to a file of the repository (``docs/format/reader.md``, ``src/...``, a Markdown link,
  a bare ``NAME.md``) names a file that exists, and its ``#anchor`` a heading of that page.
* A section sign names a section of a document that numbers its sections (``RFC 8878
  §3.1.1.1``); the project's own pages have no numbered sections.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

PACKAGE = "tachyon_format"
SRC = REPO / "src" / PACKAGE

NOT_YET_CHECKED: set[str] = set()
"""Files whose references are not checked yet (with what is wrong in each)."""


def texts() -> dict[str, str]:
    """The text of every module of the package and script of the tools, page of the docs,
    and the README. (Not the tests: they name made-up modules on purpose.)"""
    paths = [*sorted(SRC.rglob("*.py")), *sorted((REPO / "tools").rglob("*.py")),
             *sorted((REPO / "docs").rglob("*.md")), REPO / "README.md"]
    return {p.relative_to(REPO).as_posix(): p.read_text(encoding="utf-8") for p in paths}


TEXTS = texts()
CHECKED = sorted(set(TEXTS) - NOT_YET_CHECKED)


# -- dotted names -------------------------------------------------------------------------

DOTTED = re.compile(r"\btachyon_format(?:\.[A-Za-z_]\w*)+")


def module_path(name: str) -> Path | None:
    """The source file of the package module *name*, if there is one."""
    base = REPO / "src" / Path(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module an ``ImportFrom`` in *module* imports from."""
    if not node.level:
        return node.module or ""
    base = module.split(".")[: len(module.split(".")) - node.level + is_package]
    return ".".join(base + ([node.module] if node.module else []))


Found = ast.AST | tuple[str, str] | None
"""What a module has under a name: a class's node (for its attributes), where an imported
name comes from (module, name), or None (anything else)."""


@functools.cache
def names_defined(module: str) -> dict[str, Found]:
    """The top-level names *module* defines or imports, with those it lists in ``__all__``,
    loads lazily (a ``_LAZY`` table) or star-imports (as ``("*", source)`` entries)."""
    path = module_path(module)
    assert path is not None
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, Found] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found[node.name] = node
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = None
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        found[name.id] = None
            if any(isinstance(t, ast.Name) and t.id in ("__all__", "_LAZY") for t in targets):
                for key in ast.walk(node.value):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        found.setdefault(key.value, None)
    for node in ast.walk(tree):  # imports anywhere (under TYPE_CHECKING too)
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.setdefault((alias.asname or alias.name).split(".")[0], None)
        elif isinstance(node, ast.ImportFrom):
            source = absolute(module, path.name == "__init__.py", node)
            inside = source.startswith(PACKAGE) and module_path(source) is not None
            for alias in node.names:
                if alias.name == "*":
                    found[f"*{source}"] = ("*", source) if inside else None
                elif found.get(alias.asname or alias.name) is None:  # (or only in __all__)
                    found[alias.asname or alias.name] = (source, alias.name) if inside else None
    return found


def lookup(module: str, name: str, seen: frozenset = frozenset()) -> tuple[bool, Found]:
    """Whether *module* has *name*, and what it is there (imports followed)."""
    if (module, name) in seen:
        return False, None
    seen |= {(module, name)}
    defined = names_defined(module)
    if name in defined:
        value = defined[name]
        if isinstance(value, tuple) and module_path(value[0]) is not None:
            there, what = lookup(*value, seen)
            return True, what if there else None
        return True, value
    for value in defined.values():
        if isinstance(value, tuple) and value[0] == "*":
            there, what = lookup(value[1], name, seen)
            if there:
                return True, what
    return False, None


def class_attributes(node: ast.ClassDef) -> set[str]:
    found = set()
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            found.add(item.name)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            found.add(item.target.id)
        elif isinstance(item, ast.Assign):
            found |= {t.id for t in item.targets if isinstance(t, ast.Name)}
    return found


def dotted_name_problem(reference: str) -> str | None:
    """Why the dotted *reference* leads nowhere; None if it names something that exists."""
    parts = reference.split(".")
    cut = max(i for i in range(1, len(parts) + 1) if module_path(".".join(parts[:i])))
    if cut == len(parts):
        return None
    module = ".".join(parts[:cut])
    name = parts[cut]
    there, node = lookup(module, name)
    if not there:
        return f"{module} has no {name!r}"
    if isinstance(node, ast.ClassDef) and cut + 1 < len(parts):
        attribute = parts[cut + 1]
        bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
        if attribute not in class_attributes(node) and not bases & {"Enum", "IntEnum",
                                                                     "IntFlag", "Exception"}:
            return f"{module}.{name} has no {attribute!r}"
    return None


# -- file paths and anchors ----------------------------------------------------------------

REPO_PATH = re.compile(
    r"(?<![\w/.-])((?:docs/[\w./-]*\.md|src/tachyon_format/[\w./-]*\w|(?:tests|tools)/[\w./-]*\w))"
    r"(#[\w-]+)?")
"""The project's own paths (``src/profiledata.cc`` and ``docs/*.adoc`` are other projects')."""
MARKDOWN_LINK = re.compile(r"\]\(([^)\s:]+?\.md)(#[\w-]+)?\)")
BARE_PAGE = re.compile(r"(?<![\w/.-])([A-Z][A-Z_-]*\.md)\b")
"""A top-level page named by itself (``README.md``, ``STYLE.md``)."""


def anchor_of(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; a
    link keeps its text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


@functools.cache
def anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)  # (no headings in code)
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, flags=re.M):
        slug = anchor_of(heading)
        found.add(slug if slug not in found else next(
            f"{slug}-{n}" for n in range(1, 1000) if f"{slug}-{n}" not in found))
    found |= set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    return found


def path_problem(target: Path, anchor: str | None, shown: str) -> str | None:
    if not target.exists():
        return f"no file {shown}"
    if anchor and target.suffix == ".md" and anchor[1:] not in anchors(target):
        return f"no heading {anchor} in {shown}"
    return None


def path_problems(where: str, text: str) -> list[str]:
    here = (REPO / where).parent
    problems = []
    for match in REPO_PATH.finditer(text):
        path, anchor = match.group(1).rstrip("."), match.group(2)
        if "*" in path or "{" in path:
            continue
        problems.append(path_problem(REPO / path, anchor, path))
    if where.endswith(".md"):
        for match in MARKDOWN_LINK.finditer(text):
            problems.append(path_problem(here / match.group(1), match.group(2),
                                         match.group(1)))
    for match in BARE_PAGE.finditer(text):
        page = match.group(1)
        if not any((base / page).exists() for base in (REPO, REPO / "docs", here)):
            problems.append(f"no page {page}")
    return [p for p in problems if p]


# -- section signs -------------------------------------------------------------------------

SECTION = re.compile(r"§\s*\d[\d.]*\d|§\s*\d")
NUMBERED_DOCUMENT = re.compile(r"\b(RFC|PEP)\s*\d+\s*$")
"""What may come right before a section sign: a document whose sections are numbered."""


def section_problems(text: str) -> list[str]:
    problems = []
    for match in SECTION.finditer(text):
        before = text[text.rfind("\n", 0, match.start()) + 1:match.start()]
        if not NUMBERED_DOCUMENT.search(before):
            shown = " ".join([*before.split()[-1:], match.group(0)])
            problems.append(f"section {shown!r} of no numbered document")
    return problems


def problems_of(where: str) -> list[str]:
    text = TEXTS[where]
    found = [problem for ref in sorted(set(DOTTED.findall(text)))
             if (problem := dotted_name_problem(ref))]
    return found + path_problems(where, text) + section_problems(text)


@pytest.mark.parametrize("where", CHECKED)
def test_every_reference_leads_somewhere(where):
    assert not problems_of(where), f"{where}: {problems_of(where)}"


def test_the_checks_catch_each_kind_of_dead_reference():
    assert dotted_name_problem("tachyon_format.codec.kernels") == (
        "tachyon_format has no 'codec'")
    assert dotted_name_problem("tachyon_format.model.Profile.no_such_method") == (
        "tachyon_format.model.Profile has no 'no_such_method'")
    assert dotted_name_problem("tachyon_format.model.profile.Profile.stack_frames") is None
    assert dotted_name_problem("tachyon_format.ThreadStatus.HAS_GIL") is None
    assert path_problems("src/tachyon_format/x.py", "see docs/format/reader.md#settings") == []
    nowhere = "docs/format/reader.md" + "#no-such"  # (not a citation test_docs_current sees)
    assert path_problems("src/tachyon_format/x.py", nowhere) == [
        "no heading #no-such in docs/format/reader.md"]
    assert path_problems("src/tachyon_format/x.py", "Tier (c) of STYLE.md 3.5") == [
        "no page STYLE.md"]
    assert path_problems("docs/cli.md", "[reader](format/nowhere.md)") == [
        "no file format/nowhere.md"]
    assert section_problems("Spec §10 sniffing; RFC 8878 §3.1.1.1") == [
        "section 'Spec §10' of no numbered document"]


def test_every_file_not_yet_checked_exists():
    """An entry for a file that was renamed or removed would check nothing."""
    assert set(TEXTS) >= NOT_YET_CHECKED

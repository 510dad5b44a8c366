"""Render the format pages ``docs/format/*.md`` from the schema declarations, and the plain
(construct-free) twins of the declarations the readers use: the Tachyon layouts,
``src/tachyon_format/schema/tachyon_plain.py``, the gperftools header rule,
``src/tachyon_format/schema/gperftools_plain.py``, and pprof's messages,
``src/tachyon_format/schema/pprof_plain.py``.

    python tools/specgen.py            # (re)write docs/format/ and the plain layouts
    python tools/specgen.py --check    # exit 1 and print a diff if either is stale

The rendering lives in the package (``tachyon_format.specdoc``, also behind
``tachyon-format spec``); this script writes the pages and checks that the committed ones are
current. The hand-written pages of the same directory (``PROSE_PAGES``) carry no generated
marker; it never writes, checks or deletes them.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable
from pathlib import Path

from tachyon_format.specdoc import (
    GENERATED,
    PROSE_PAGES,
    gperftools_plain,
    plain,
    pprof_plain,
    render,
)

__all__ = ["GENERATED", "OUT_DIR", "PLAIN_MODULES", "PROSE_PAGES", "main", "render", "stale",
           "stale_module", "write", "write_module"]

REPO = Path(__file__).resolve().parent.parent
OUT_DIR = REPO / "docs" / "format"
PLAIN_MODULES: dict[Path, Callable[[], str]] = {
    REPO / "src" / "tachyon_format" / "schema" / generator.MODULE: generator.render_module
    for generator in (plain, gperftools_plain, pprof_plain)
}
"""Each generated module and what renders it."""


def stale(out_dir: Path = OUT_DIR) -> list[str]:
    """Unified diffs between *out_dir* and what would be rendered now ([] if current)."""
    diffs = []
    expected = render()
    present = {p.name for p in out_dir.glob("*.md")
               if p.read_text(encoding="utf-8").startswith(GENERATED)}
    for name in sorted(set(expected) | present):
        path = out_dir / name
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        new = expected.get(name, "")
        if old != new:
            diffs.append("".join(difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True),
                f"committed/{name}", f"generated/{name}")))
    return diffs


def stale_module(path: Path) -> str:
    """The unified diff between the generated module at *path* (a key of
    :data:`PLAIN_MODULES`) and what the declarations give now ("" if current)."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    return "".join(difflib.unified_diff(
        old.splitlines(keepends=True), PLAIN_MODULES[path]().splitlines(keepends=True),
        f"committed/{path.name}", f"generated/{path.name}"))


def write_module(path: Path) -> bool:
    """Write the generated module at *path*; whether the file changed."""
    text = PLAIN_MODULES[path]()
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def write(out_dir: Path = OUT_DIR) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    expected = render()
    for path in out_dir.glob("*.md"):  # generated pages that no longer exist
        if path.name not in expected and path.read_text(encoding="utf-8").startswith(GENERATED):
            path.unlink()
    written = []
    for name, text in expected.items():
        path = out_dir / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def main(argv: list[str] | None = None, out: Callable[[str], object] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the pages are stale")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="output directory")
    args = parser.parse_args(argv)
    if args.check:
        diffs = stale(args.out) + [d for d in map(stale_module, PLAIN_MODULES) if d]
        for diff in diffs:
            out(diff)
        if diffs:
            out(f"{len(diffs)} file(s) stale: run python tools/specgen.py")
            return 1
        return 0
    written = write(args.out) + [path for path in PLAIN_MODULES if write_module(path)]
    for path in written:
        out(f"wrote {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

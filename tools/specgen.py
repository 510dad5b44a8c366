"""Render the format pages ``docs/format/*.md`` from the schema declarations.

    python tools/specgen.py            # (re)write docs/format/
    python tools/specgen.py --check    # exit 1 and print a diff if the pages are stale

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

from tachyon_format.specdoc import GENERATED, PROSE_PAGES, render

__all__ = ["GENERATED", "OUT_DIR", "PROSE_PAGES", "main", "render", "stale", "write"]

REPO = Path(__file__).resolve().parent.parent
OUT_DIR = REPO / "docs" / "format"


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
        diffs = stale(args.out)
        for diff in diffs:
            out(diff)
        if diffs:
            out(f"{len(diffs)} page(s) stale: run python tools/specgen.py")
            return 1
        return 0
    for path in write(args.out):
        out(f"wrote {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

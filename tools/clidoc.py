"""Render ``docs/cli.md``, the command-line reference, from the argument parser itself.

    python tools/clidoc.py            # (re)write docs/cli.md
    python tools/clidoc.py --check    # exit 1 and print a diff if the page is stale

Every command, argument, default and help text on the page comes from
``tachyon_format.cli.main.build_parser()``, rendered as tables (not argparse's own help
layout, which changes between Python versions), so the page is the same on every Python.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from tachyon_format.cli.main import build_parser

OUT = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
INTRO = """# Command-line reference

`tachyon-format` (also `python -m tachyon_format`) works on files of every format the library
reads; formats are sniffed from the content. Errors are one line naming the file, the byte
offset and the field; the exit status is 0 on success and 1 on an error (`validate`: 2 when a
file cannot be read at all). Generated from the parser by `tools/clidoc.py`; the examples of
[quickstart.md](quickstart.md) and the README run in the tests.

Long work (reading a big Tachyon file, many files for `validate` or `info`) draws a progress
bar on standard error when it is a terminal and the work takes more than half a second; there
is none when standard error is a pipe or a file, or with `--quiet`, and what a command prints
is the same either way. The bars come from [tqdm](https://tqdm.github.io) (the `progress`
extra, `pip install 'tachyon-format[progress]'`; without it there are no bars): no
dependencies of its own (rich, the other candidate, brings pygments and markdown-it-py for
features a bar does not need) and about 50 ms to import, which only a command that draws a
bar pays. `info` on a Tachyon file reads the header with the standard library, so it starts
about as fast as CPython's own reader ([benchmark.md](benchmark.md#start-up-tachyon-format-info)).
"""


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    # argparse keeps its subcommands in a private action; it has no public accessor
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {a.dest: a.help or "" for a in action._choices_actions}
    return {}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _argument_row(action: argparse.Action) -> str | None:
    if isinstance(action, argparse._HelpAction):
        return None
    if action.option_strings:
        name = ", ".join(f"`{o}`" for o in action.option_strings)
        if action.nargs != 0:
            name += f" `{action.metavar or action.dest.upper()}`"
    else:
        name = f"`{action.metavar or action.dest}`"
        if action.nargs == "+":
            name += " (one or more)"
    help_text = action.help or ""
    if "%(prog)s" in help_text:
        help_text = help_text.replace("%(prog)s", "tachyon-format")
    extra = []
    if action.choices and not isinstance(action.choices, dict):
        extra.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
    if action.option_strings and action.default not in (None, False, 0, [],
                                                         argparse.SUPPRESS):
        extra.append(f"default `{action.default}`")
    if action.required and action.option_strings:
        extra.append("required")
    text = _cell(help_text) + ("" if not extra else " (" + "; ".join(extra) + ")")
    return f"| {name} | {text} |"


def _usage(name: str, parser: argparse.ArgumentParser) -> str:
    """``tachyon-format NAME [options] POSITIONAL...`` (argparse's own usage line wraps and
    lists choices differently across Python versions)."""
    words = [f"tachyon-format {name}", "[options]"]
    for action in parser._actions:
        if not action.option_strings:
            word = action.metavar or action.dest
            words.append(f"{word}..." if action.nargs == "+" else word)
    return " ".join(words)


def render() -> str:
    parser = build_parser()
    lines = [INTRO, "## Commands", "", "| command | what it does |", "|---|---|"]
    helps = _helps(parser)
    commands = _subcommands(parser)
    lines += [f"| [`{name}`](#{name}) | {_cell(helps.get(name, ''))} |" for name in commands]
    lines += ["", "`tachyon-format --version` prints the version."]
    for name, sub in commands.items():
        lines += ["", f"## {name}", "", f"`{_usage(name, sub)}`", ""]
        if sub.description:
            lines += [_cell(sub.description), ""]
        rows = [row for row in map(_argument_row, sub._actions) if row]
        if rows:
            lines += ["| argument | meaning |", "|---|---|", *rows]
        if sub.epilog:
            lines += ["", _cell(sub.epilog)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            sys.stdout.writelines(difflib.unified_diff(
                current.splitlines(True), text.splitlines(True), "docs/cli.md", "generated"))
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

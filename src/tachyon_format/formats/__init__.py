"""Every file format the package knows, in one registry: :data:`FORMATS`.

A format is a subpackage (``formats/<name>/``). The registry names each format with its file
extensions and where each of its verbs (``sniff``, ``read``, ``iter_batches``, ``write``,
``validate``, ``info``; any may be absent) lives, as ``"module:function"`` inside the
subpackage. A verb's module is imported only when the verb is first used, so that ``import
tachyon_format`` (and ``tachyon-format info``) loads no decoder it does not need; ``sniff``
lives in the subpackage's ``__init__``, which stays light.
"""

from __future__ import annotations

import fnmatch
import importlib
import re
import sys
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import inspect

VERBS = ("sniff", "read", "read_aggregated", "iter_batches", "write", "validate", "info",
         "salvage")


@dataclass(frozen=True)
class Format:
    """One file format: its ``name`` (as ``format=`` takes it), what it is, the file name
    ``extensions`` it usually has (lower case, with the dot; or a pattern of the whole name
    with ``*``, as ``callgrind.out.*``), and the module with its verbs. ``timeline``: its
    writer needs each sample's time (a Tachyon file, a trace), so that a conversion to it
    cannot start from per-stack counts. ``read_aggregated``, where a format has it, reads
    straight into per-(thread, stack, status) counts. ``salvage``, where a format has it, is
    ``read(..., strict=False)``: what is readable in a broken file, with
    ``extras["salvage"]`` listing what was lost. ``seeks``: its writer goes back in its
    file (a Tachyon header is written last), so it writes to a path; the verbs give it a
    temporary file for any other destination (standard output, a file object, ``.gz``) and
    copy that out; every other writer writes to any binary stream as it goes."""

    name: str
    description: str
    extensions: tuple[str, ...]
    package: str
    verbs: Mapping[str, str]
    timeline: bool = False
    seeks: bool = False

    def verb(self, name: str) -> Callable[..., Any] | None:
        """The format's function for *name* (one of :data:`VERBS`), None if it has none."""
        if name not in VERBS:
            raise ValueError(f"unknown verb {name!r}")
        where = self.verbs.get(name)
        if where is None:
            return None
        module, _, function = where.rpartition(":")
        return getattr(importlib.import_module(f"{self.package}{module and '.' + module}"),
                       function)

    def file_name(self, stem: str = "profile") -> str:
        """A file name of this format: *stem* with the first extension, or the first pattern
        with *stem* for its ``*`` (``callgrind.out.profile``)."""
        first = self.extensions[0] if self.extensions else ""
        return first.replace("*", stem) if "*" in first else stem + first

    def write_options(self) -> dict[str, inspect.Parameter]:
        """The keyword options of the format's writer, by name: those of its ``write``, and,
        when ``write`` passes ``**options`` on, those of the function its docstring names
        (``*options* as for :func:`build```). Empty for a format written by no writer."""
        import inspect  # (here: a conversion with no options never asks)

        write = self.verb("write") if "write" in self.verbs else None
        if write is None:
            return {}
        options: dict[str, inspect.Parameter] = {}
        functions = [write]
        named = re.search(r":func:`(\w+)`", write.__doc__ or "")
        if named is not None:
            target = getattr(sys.modules[write.__module__], named.group(1), None)
            if callable(target):
                functions.append(target)
        for function in functions:
            try:  # (the annotations resolved, for the Literal choices of an option)
                hints = typing.get_type_hints(function)
            except Exception:  # noqa: BLE001 (a name only a type checker knows)
                hints = {}
            for parameter in inspect.signature(function).parameters.values():
                if parameter.kind is parameter.KEYWORD_ONLY:
                    options.setdefault(parameter.name, parameter.replace(
                        annotation=hints.get(parameter.name, parameter.annotation)))
        return options

    @property
    def can_read(self) -> bool:
        """Whether the library reads this format (some are written only)."""
        return self.verb("read") is not None

    @property
    def can_write(self) -> bool:
        """Whether the library writes this format."""
        return self.verb("write") is not None


READ_WRITE = MappingProxyType({"sniff": "sniff", "read": "reader:read", "write": "writer:write",
                               "validate": "reader:validate", "info": "reader:info"})
"""The verbs of a format read by ``reader.py`` (which also validates and tells the facts of a
file) and written by ``writer.py``."""
WRITE_ONLY = MappingProxyType({"sniff": "sniff", "write": "writer:write"})
"""The verbs of a format the library writes (``writer.py``) but does not read."""

FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("tachyon", "CPython 3.15 sampling-profiler binary (profiling.sampling --binary)",
               (".bin", ".tachyon"), "tachyon_format.formats.tachyon",
               {"sniff": "sniff", "read": "reader:read",
                "read_aggregated": "reader:read_aggregated", "iter_batches": "reader:iter_batches",
                "write": "writer:write", "validate": "validation:validate",
                "info": "header_info:info", "salvage": "salvage:read"}, timeline=True,
               seeks=True),
        Format("gperftools", "gperftools CPU profile (libprofiler, CPUPROFILE=...; pprof's "
               "legacy CPU format)", (".prof", ".cpu"), "tachyon_format.formats.gperftools",
               {"sniff": "sniff", "read": "reader:read", "write": "writer:write",
                "validate": "validation:validate", "info": "reader:info"}),
        Format("chrome-trace", "Chrome trace event JSON (chrome://tracing, Perfetto): a "
               "timeline of stack slices per thread", (".trace.json",),
               "tachyon_format.formats.chrome_trace", WRITE_ONLY, timeline=True),
        Format("callgrind", "callgrind profile (KCachegrind, QCachegrind, callgrind_annotate)",
               ("callgrind.out.*", ".callgrind"), "tachyon_format.formats.callgrind", WRITE_ONLY),
        Format("pstats", "pstats: the marshal'd statistics dict of profile/cProfile and of "
               "CPython 3.15's sampling profiler (replay --pstats -o); written, not read",
               (".pstats",), "tachyon_format.formats.pstats", READ_WRITE),
        Format("speedscope", "speedscope JSON (https://www.speedscope.app): sampled and "
               "evented profiles, one per thread", (".speedscope.json",),
               "tachyon_format.formats.speedscope", READ_WRITE),
        Format("gecko", "Firefox Profiler's Gecko profile JSON, as CPython's replay --gecko "
               "writes it (write only)", (".gecko.json",), "tachyon_format.formats.gecko",
               WRITE_ONLY, timeline=True),
        Format("jsonl", "CPython's JSON Lines export (profiling.sampling replay --jsonl): "
               "frame table with per-frame self and cumulative counts", (".jsonl",),
               "tachyon_format.formats.jsonl", READ_WRITE),
        Format("collapsed", "collapsed (folded) stacks: `frame;frame;... count` lines "
               "(CPython's --collapsed, flamegraph.pl, py-spy, speedscope)",
               (".collapsed", ".folded", ".collapsed.txt", ".folded.txt"),
               "tachyon_format.formats.collapsed", READ_WRITE),
        Format("pprof", "pprof profile.proto: a Profile message, gzip'd, zstd'd or raw "
               "(go tool pprof, Pyroscope, Parca, Datadog)",
               (".pb.gz", ".pb.zst", ".pprof", ".pb"), "tachyon_format.formats.pprof", READ_WRITE),
    )
}
"""Formats by name, in the order content sniffing tries them (pprof last: a raw protobuf
message has no magic, so its sniffing is the loosest)."""


def format_for_extension(filename: str) -> Format | None:
    """The format whose extensions end *filename* (longest match wins; a pattern with ``*``
    must match the whole base name), None if none does."""
    name = filename.lower()
    base = name.replace("\\", "/").rpartition("/")[2]
    best: tuple[int, Format] | None = None
    for f in FORMATS.values():
        for ext in f.extensions:
            matched = fnmatch.fnmatchcase(base, ext) if "*" in ext else name.endswith(ext)
            if matched and (best is None or len(ext) > best[0]):
                best = (len(ext), f)
    return None if best is None else best[1]

"""The verbs: ``read``, ``iter_batches``, ``write``, ``convert``, ``validate``, ``info``,
``sniff``.

Each verb finds the format (``format=`` if given, else from the content's first bytes, else
from the file name's extension) in :data:`tachyon_format.formats.FORMATS` and hands the work
to that format's module. Input compressed with gzip whose content no format claims (a
``.collapsed.gz``) is decompressed first; a destination ending ``.gz`` that no format claims
is written compressed. The command line calls only these.
"""

from __future__ import annotations

import contextlib
import os
import sys
import zlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from .errors import FormatError
from .formats import FORMATS, Format, format_for_extension
from .formats.sources import Destination, Source, gunzip, output_stream, read_bytes, read_head
from .problems import Problem

if TYPE_CHECKING:  # (the model needs numpy: it loads with the first verb that reads)
    from .model import Profile

SNIFF_SIZE = 4096
"""Bytes of the start of a file that sniffing looks at: every magic fits, and so does the
start of a compressed pprof file, whose first fields sniffing decompresses (a deflate block
header alone can take a few hundred bytes)."""


def sniff(source: Source) -> str | None:
    """The name of the format *source* is in, judged from its first bytes; None if no format
    of :data:`~tachyon_format.FORMATS` recognises them."""
    head, _ = _head(source)
    return _sniff_head(head)


def read(source: Source, *, format: str | None = None, aggregate: bool = False,
         strict: bool = True, **options: Any) -> Profile:
    """The whole profile in *source* as columns. *options* go to the format's reader (for
    Tachyon: ``threads``, ``chunk_size``, ``progress``). Raises :class:`FormatError` for
    malformed input.

    ``aggregate=True``: one sample row per distinct (thread, stack, status) with the summed
    weights as ``values`` and no timestamps (:func:`~tachyon_format.model.aggregate.
    aggregate_samples`): all that outputs without a timeline need. A format with a
    ``read_aggregated`` verb counts while decoding (Tachyon: rows in order of first
    appearance, memory by distinct rows); others read every sample first.

    ``strict=False``: recover what is readable from a broken file instead of raising, and
    list what was lost in ``profile.extras["salvage"]`` (a list of :class:`Problem`, ``[]``
    when the file read whole); see docs/validation.md#salvage. Tachyon files are salvaged
    (cut short, a profiler killed before it finished, a damaged statistics block); other
    formats are read as usual."""
    if not strict:
        chosen, source = _format_of(source, format, "read", salvage=True)
        salvage = chosen.verb("salvage")
        if salvage is not None:
            return salvage(source, aggregate=aggregate, **options)
        profile = read(source, format=chosen.name, aggregate=aggregate, **options)
        profile.extras["salvage"] = []
        return profile
    chosen, source = _format_of(source, format, "read")
    if aggregate:
        direct = chosen.verb("read_aggregated")
        if direct is not None:
            return direct(source, **options)
        from .model.aggregate import aggregate_samples

        return aggregate_samples(chosen.verb("read")(source, **options))
    return chosen.verb("read")(source, **options)


def iter_batches(source: Source, *, format: str | None = None,
                 **options: Any) -> Iterator[Profile]:
    """The profile in successive batches of samples, in bounded memory (for Tachyon:
    ``samples_per_batch``, ``threads``); stack and thread ids stay valid across batches. A
    format its library reads whole (every format but Tachyon) comes as one batch."""
    chosen, source = _format_of(source, format, "read")
    batches = chosen.verb("iter_batches")
    if batches is None:  # (a format read whole: its profile is the one batch)
        if "samples_per_batch" in options and options["samples_per_batch"] < 1:
            raise ValueError("samples_per_batch must be positive")
        options.pop("samples_per_batch", None)
        return iter([chosen.verb("read")(source, **options)])
    return batches(source, **options)


def write(profile: Profile, destination: Destination, *, format: str | None = None,
          **options: Any) -> str:
    """Write *profile* to *destination* in *format* (default: from the path's extension, else
    the profile's own format, else Tachyon); *options* go to the format's writer. A path
    ending ``.gz`` that no format claims as a whole (``out.collapsed.gz``) is written in the
    format of the rest of its name, gzip-compressed. Returns the format's name."""
    chosen, compress = _output_format(destination, format, own=profile.extras)
    writer = chosen.verb("write")
    if writer is None:
        raise ValueError(f"tachyon_format cannot write {chosen.name} files")
    unknown = sorted(set(options) - set(chosen.write_options())) if options else []
    if unknown:
        known = ", ".join(chosen.write_options()) or "none"
        raise ValueError(f"the {chosen.name} writer has no option {unknown[0]!r} (its options:"
                         f" {known})")
    if not compress and isinstance(destination, str | os.PathLike) and destination != "-":
        writer(profile, destination, **options)  # (the writer's name-given defaults apply)
        return chosen.name
    with _output(destination, compress) as out:
        if chosen.seeks:
            _write_staged(chosen, writer, profile, out, options)
        else:
            writer(profile, out, **options)
    return chosen.name


def convert(source: Source, destination: Destination, *, to: str | None = None,
            from_: str | None = None, read_options: dict[str, Any] | None = None,
            **options: Any) -> str:
    """Read *source* (format *from_*, else sniffed from the content, else from the name) and
    write it to *destination* as *to* (else from the destination's name; required for
    ``"-"`` and file objects). *options* go to the writer, *read_options* to the reader.

    An output without a timeline (pprof, collapsed, pstats, ...) is made from per-(thread,
    stack, status) counts (``read(..., aggregate=True)``), which is faster and smaller than
    every sample. Returns the name of the format written."""
    named = isinstance(destination, str | os.PathLike) and destination != "-"
    if to is None and not named:
        raise ValueError("writing to standard output or a file object needs to=FORMAT")
    if to is None:
        output_format(destination)  # (a name no format claims is refused, not guessed)
    target, _ = _output_format(destination, to)
    if target.verb("write") is None:
        raise ValueError(f"tachyon_format cannot write {target.name} files")
    profile = read(source, format=from_, aggregate=not target.timeline,
                   **(read_options or {}))
    return write(profile, destination, format=target.name, **options)


def validate(source: Source, *, format: str | None = None, **options: Any) -> list[Problem]:
    """Every problem found in *source*, ``[]`` if there is none: each a :class:`Problem`
    with its severity (``unreadable``, ``inconsistent``, ``note``), offset, field path and,
    where a check compares, what was expected and found. Never raises for bad input, nor for
    a path that is missing, a directory or unreadable. Tachyon files are checked through
    (docs/validation.md); other formats report what stops their reader."""
    try:
        chosen, source = _format_of(source, format, "validate", salvage=True)
    except FormatError as exc:
        return [Problem.from_error(exc)]
    except OSError as exc:
        return [Problem.from_os_error(exc)]
    except ValueError as exc:
        if format is not None:
            raise  # an unknown format name: the caller's mistake
        return [Problem("note", f"{exc}: nothing was checked")]
    return chosen.verb("validate")(source, **options)


def info(source: Source | Profile, *, format: str | None = None) -> dict[str, Any]:
    """Header-level facts of a file, without decoding its samples (for Tachyon: the dict of
    CPython's ``BinaryReader.get_info()``). For a :class:`Profile` read from a file: what
    that file's header said."""
    model = sys.modules.get(f"{__package__}.model")  # not loaded: *source* is no Profile,
    if model is not None and isinstance(source, model.Profile):  # and info stays light
        for name, facts in source.extras.items():
            if name in FORMATS and hasattr(facts, "info"):
                return facts.info
        raise ValueError("this profile carries no file-level facts (it was not read from a "
                         "file whose format has them)")
    chosen, source = _format_of(source, format, "info")
    return chosen.verb("info")(source)


# -- finding the format ------------------------------------------------------------------------


def _output_format(destination: Destination, format: str | None,
                   own: Iterable[str] = ()) -> tuple[Format, bool]:
    """The format to write (*format*, else the destination's extension, else the first of
    *own* that is a format, else Tachyon) and whether to gzip it (a ``.gz`` name that no
    format claims whole)."""
    name = os.fspath(destination) if isinstance(destination, str | os.PathLike) else ""
    by_extension = format_for_extension(name) if name else None
    compress = by_extension is None and name.lower().endswith(".gz")
    if compress:
        by_extension = format_for_extension(name[:-3])
    if format is not None:
        return _named(format), compress
    first_own = next((f for f in own if f in FORMATS), None)
    return _named(by_extension.name if by_extension is not None
                  else first_own or "tachyon"), compress


def output_format(destination: str | os.PathLike) -> str:
    """The format a file name asks for (its extension, or a ``.gz`` of one); ValueError,
    listing the formats and their extensions, for a name no format claims."""
    name = os.fspath(destination)
    chosen = format_for_extension(name)
    if chosen is None and name.lower().endswith(".gz"):
        chosen = format_for_extension(name[:-3])
    if chosen is None or "write" not in chosen.verbs:
        known = "; ".join(f"{f.name} ({', '.join(f.extensions)})" for f in FORMATS.values()
                          if f.extensions and "write" in f.verbs)
        raise ValueError(f"no format writes files named like {os.path.basename(name)!r}: "
                         f"name the output with one of these extensions, or give the format "
                         f"({known})")
    return chosen.name


# -- where the bytes go --------------------------------------------------------------------


@contextlib.contextmanager
def _output(destination: Destination, compress: bool) -> Iterator[BinaryIO]:
    """The one place a destination is opened for a writer: standard output for ``"-"``, the
    path, or the caller's binary file (left open); gzip-compressing when *compress*. A path
    whose writer fails is removed (no half file, nor an empty gzip stream, is left)."""
    if destination == "-":
        sys.stdout.flush()  # (text printed before comes first)
        stream: Any = contextlib.nullcontext(sys.stdout.buffer)
    else:
        stream = output_stream(destination)
    try:
        with stream as out:
            if compress:
                import gzip  # (here: only a .gz destination needs it)

                with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as packed:
                    yield packed  # type: ignore[misc]
            else:
                yield out
            if destination == "-":
                out.flush()
    except BaseException:
        if isinstance(destination, str | os.PathLike) and destination != "-":
            with contextlib.suppress(OSError):
                os.remove(destination)
        raise


def _write_staged(chosen: Format, writer: Any, profile: Profile, out: BinaryIO,
                  options: dict[str, Any]) -> None:
    """*writer*'s file copied to *out*: the writer of a format that seeks back in its file
    (:attr:`Format.seeks`) writes a private temporary file."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tachyon-format-") as scratch:
        staged = os.path.join(scratch, chosen.file_name())
        writer(profile, staged, **options)
        with open(staged, "rb") as staged_file:
            shutil.copyfileobj(staged_file, out, 1 << 20)


def _named(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        known = ", ".join(FORMATS)
        raise ValueError(f"unknown format {name!r} (known: {known})") from None


def _format_of(source: Source, format: str | None, verb: str,
               salvage: bool = False) -> tuple[Format, Source]:
    """The format of *source* and the source to hand on (a stream is read whole first, so
    that sniffing does not consume it). *salvage*: a start of 64 zero bytes is a Tachyon
    file whose profiler was killed before it wrote the header (for ``validate`` and
    ``read(..., strict=False)``, which say so)."""
    if format is not None:
        chosen = _named(format)
    else:
        head, source = _head(source)
        _refuse_a_cut_magic(head)
        name = _sniff_head(head)
        if name is None and head.startswith(GZIP_MAGIC):
            try:
                inner = _gunzip(source)
            except FormatError:  # broken: said below as what the bytes look like
                inner = None
            if inner is not None:
                if _sniff_head(inner[:SNIFF_SIZE]) is None:
                    raise FormatError(f"not a profile this library reads: gzip-compressed "
                                      f"data (inside: {describe(inner[:SNIFF_SIZE])})",
                                      offset=0, path="magic")
                return _format_of(inner, format, verb)
        if name is None and salvage and head[:TACHYON_HEADER_SIZE] == bytes(TACHYON_HEADER_SIZE):
            name = "tachyon"
        if name is None and isinstance(source, str | os.PathLike):
            by_extension = format_for_extension(os.fspath(source))
            name = by_extension.name if by_extension is not None else None
        if name is None:
            raise FormatError(f"not a profile this library reads: {describe(head)}",
                              offset=0, path="magic")
        chosen = FORMATS[name]
    if chosen.verb(verb) is None:
        raise ValueError(f"tachyon_format cannot {verb.replace('_', ' ')} {chosen.name} files")
    return chosen, source


GZIP_MAGIC = b"\x1f\x8b"
MAGICS = {b"HCAT": "a Tachyon file", b"TACH": "a Tachyon file", GZIP_MAGIC: "gzip data",
          b"\x28\xb5\x2f\xfd": "zstd data"}
"""The magics whose first bytes alone, in an input too short to hold one, are a cut file of
that kind (a few bytes that no reader should take for something else: a protobuf message
can be that short)."""


def _refuse_a_cut_magic(head: bytes) -> None:
    for magic, what in MAGICS.items():
        if 0 < len(head) < len(magic) and magic.startswith(head):
            raise FormatError(f"the input is {len(head)} byte{'s' * (len(head) > 1)} long: "
                              f"too short for "
                              f"{what}, whose first bytes it holds (cut short?)", offset=0,
                              path="magic")
TACHYON_HEADER_SIZE = 64
"""A Tachyon writer puts this many zero bytes first and writes the header last."""
MAX_GUNZIPPED_SIZE = 1 << 32
"""The most a gzip'd input of a format without its own compression may unpack to (4 GiB):
checked while unpacking, so a gzip bomb fails instead of filling memory."""


def _gunzip(source: Source) -> bytes:
    """The gzip'd *source* unpacked (every member), at most :data:`MAX_GUNZIPPED_SIZE`."""
    try:
        return bytes(gunzip(read_bytes(source), MAX_GUNZIPPED_SIZE, label="gzip'd input"))
    except zlib.error as exc:
        raise FormatError(f"broken gzip data: {exc}", offset=0, path="gzip") from None


def _sniff_head(head: bytes) -> str | None:
    for name, candidate in FORMATS.items():
        sniffer = candidate.verb("sniff")
        if sniffer is not None and sniffer(head):
            return name
    return None


def _head(source: Source) -> tuple[bytes, Source]:
    """The first :data:`SNIFF_SIZE` bytes of *source*, and what to read the whole from."""
    return read_head(source, SNIFF_SIZE)


_LOOKS_LIKE = (
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
    (b"\x00" * 8, "an all-zero start (a Tachyon file whose profiler never finished writing it?)"),
)


def describe(head: bytes) -> str:
    """A few words on what *head* looks like, for an error about an unknown format."""
    if not head:
        return "the file is empty"
    for magic, words in _LOOKS_LIKE:
        if head.startswith(magic):
            return words
    if head.lstrip()[:1] in (b"{", b"["):
        return "JSON text"
    return f"unknown magic {head[:4].hex(' ')}"

"""Fuzz every reader of the library with atheris (libFuzzer for Python).

Usage::

    pip install atheris                       # the dev extra has it where a wheel exists
    python tools/fuzz.py --runs 100000 --jobs 2 --crash-dir /tmp/crashes
    python tools/fuzz.py --formats pprof,gperftools --runs 20000
    python tools/fuzz.py --replay /tmp/crashes/some.input     # one input, traceback shown
    python tools/fuzz.py --minimize /tmp/crashes/some.input   # smallest input, same failure
    python tools/fuzz.py --asan --formats tachyon --runs 100000 --jobs 2   # the compiled walk
                                              # built with AddressSanitizer (gcc's libasan)
    python tools/fuzz.py --asan --region --formats tachyon --runs 100000   # ... every input
                                              # a valid file around a mutated sample region
    python tools/fuzz.py --fleet --runs 2000 --jobs 2 --no-coverage   # the fleet writer

Each input goes through the public verbs only: ``sniff``, then ``read``, ``iter_batches``
(where the format has it), ``info``, ``read(..., strict=False)`` (``salvage``, where the
format has it: Tachyon) and ``validate``, with the sniffed format (or, when nothing claims
the bytes, one chosen from them, so that every reader sees mutated data). ``FormatError`` is
the expected answer to bad input; anything else, an input slower than ``--max-seconds`` or a
``MemoryError`` under the address-space cap (``--max-mb``) is a crash: it is written to
``--crash-dir`` with its traceback and fuzzing goes on (``--stop-on-crash`` stops instead).
``validate`` must never raise at all; salvage must list what it lost as its contract says
(:func:`check_salvaged`).

The seed corpus is every golden file in ``tests/data`` and, when present, the third-party
files in ``../shared/fixtures``, plus the Tachyon golden files converted by the library's
writers to every readable format that has no golden file of its own (pprof raw, gzip and
zstd; speedscope; JSONL; gperftools). Workers (``--jobs``) are separate processes sharing one
corpus directory; at the end the parent prints the inputs run, the time, the rate and the
peak memory (largest worker RSS).

``--asan`` fuzzes the compiled record walk (``region/walk.py``) built with AddressSanitizer:
the parent compiles it once into a temporary directory (``setup.py build_ext`` with
``-fsanitize=address``), and the workers load that build in place of the installed one, with
the sanitizer's runtime preloaded (an out-of-bounds read or write aborts the worker, which is
reported with the sanitizer's trace). The address-space cap is left off there (the sanitizer
reserves terabytes of shadow memory); libFuzzer's RSS limit still holds.

``--region`` mutates only the sample region of a Tachyon input (decompressed, mutated by
libFuzzer, written back uncompressed with the header's table offsets moved to match), so
that every input passes the checks at open and reaches the record walk; bytes that are no
readable Tachyon file of the current layout are mutated whole, as without it.

``--fleet`` fuzzes the fleet writer instead of the read verbs: each input is added to a
Delta Lake dataset (``tachyon_format.fleet.dataset.add``), one per worker, reused for
``--fleet-adds`` inputs, and the dataset's contract is checked after each add
(:func:`exercise_fleet`), with or without ``timestamps`` and in batches of 7 samples or
of a million, as the input's hash chooses. An input costs 0.2-0.5 s of CPU: runs are of
thousands of inputs.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = REPO / "tests" / "data"
SHARED_FIXTURES = REPO.parent / "shared" / "fixtures"
NOT_PROFILES = {".md", ".py", ".proto", ".LICENSE.txt", ".string", ".ref.jsonl.gz"}
"""Suffixes of files beside the golden files that are not profiles (notes, sources)."""

DERIVED = {"pprof": ("profile.pb", "profile.pb.gz", "profile.pb.zst"),
           "speedscope": ("profile.speedscope.json",), "jsonl": ("profile.jsonl",),
           "gperftools": ("profile.prof",), "collapsed": ("profile.collapsed.gz",)}
"""What the Tachyon golden files are converted to for the seed corpus (file names pick the
format and, for pprof, the compression)."""


# -- the seed corpus ---------------------------------------------------------------------------


def golden_files() -> list[Path]:
    """Every profile file in ``tests/data`` and ``../shared/fixtures`` (when present)."""
    found = []
    for root in (DATA_DIR, SHARED_FIXTURES):
        if root.is_dir():
            found += [p for p in sorted(root.rglob("*")) if p.is_file()
                      and not any(p.name.endswith(s) for s in NOT_PROFILES)
                      and "LICENSES" not in p.parts]
    return found


def derived_seeds(limit: int = 3) -> Iterator[tuple[str, bytes]]:
    """The first *limit* Tachyon golden files written by the library in each other readable
    format (name, bytes)."""
    import tachyon_format

    for path in sorted(DATA_DIR.glob("*.bin"))[:limit]:
        for names in DERIVED.values():
            for name in names:
                with tempfile.TemporaryDirectory() as scratch:
                    out = Path(scratch) / name
                    tachyon_format.convert(path, out)
                    yield f"{path.stem}.{name}", out.read_bytes()


def write_seed_corpus(directory: Path, formats: list[str] | None = None) -> int:
    """Fill *directory* with the seed corpus (with *formats*: the seeds of those formats,
    when there are any); the number of files."""
    import tachyon_format

    directory.mkdir(parents=True, exist_ok=True)
    seeds = [(p.name, p.read_bytes()) for p in golden_files()] + list(derived_seeds())
    if formats:
        chosen = [(name, data) for name, data in seeds if tachyon_format.sniff(data) in formats]
        seeds = chosen or seeds
    for name, data in seeds:
        digest = hashlib.sha1(data).hexdigest()[:12]
        (directory / f"seed-{digest}-{name}").write_bytes(data)
    return len(seeds)


# -- one input ---------------------------------------------------------------------------------


class Reached(NamedTuple):
    """How deep one input got: ``read`` gave a profile or failed inside a Tachyon sample
    region (``samples``); the strict read failed and salvage still gave a profile
    (``salvaged``)."""

    samples: bool
    salvaged: bool


class Crash(Exception):
    """An input answered with something other than a result or ``FormatError``."""

    def __init__(self, verb: str, format_name: str, error: BaseException | None,
                 note: str = "") -> None:
        self.verb, self.format_name, self.error, self.note = verb, format_name, error, note
        what = note or f"{type(error).__name__}: {error}"
        super().__init__(f"{format_name} {verb}: {what}")

    def signature(self) -> str:
        """What tells two crashes apart: the verb, the error type and the innermost frame
        of the library in its traceback."""
        where = "?"
        if self.error is not None:
            for frame in traceback.extract_tb(self.error.__traceback__):
                if "tachyon_format" in frame.filename:
                    where = f"{Path(frame.filename).name}:{frame.lineno}"
        kind = type(self.error).__name__ if self.error is not None else self.note.split(":")[0]
        return f"{self.format_name}-{self.verb}-{kind}-{where}"


def readable_formats() -> list[str]:
    from tachyon_format import FORMATS

    return [name for name, f in FORMATS.items() if f.can_read]


def choose_format(data: bytes, formats: list[str] | None) -> tuple[str, str | None]:
    """The format *data* goes to (the sniffed one if in *formats*, else one of *formats*
    chosen from the bytes, so that every reader sees mutated data), and the ``format=`` the
    verbs are given (None when sniffing finds it)."""
    import tachyon_format

    try:
        sniffed = tachyon_format.sniff(data)
    except Exception as exc:  # noqa: BLE001 - sniffing must never raise
        raise Crash("sniff", "?", exc) from exc
    choices = formats or readable_formats()
    name = sniffed if sniffed in choices else choices[zlib.crc32(data) % len(choices)]
    return name, None if name == sniffed else name


def exercise(data: bytes, max_seconds: float = 10.0, formats: list[str] | None = None
             ) -> Reached:
    """Run every public verb on *data*; raise :class:`Crash` for anything but a result or
    ``FormatError`` (or a verb slower than *max_seconds*). *formats* limits the formats
    tried (the sniffed one, if in the list, else one of the list chosen from the bytes).
    How deep the mutated input got: :class:`Reached`."""
    import tachyon_format
    from tachyon_format import FORMATS, FormatError

    name, forced = choose_format(data, formats)
    chosen = FORMATS[name]
    options = {"threads": False} if name == "tachyon" else {}

    def consume_batches() -> None:
        for _ in tachyon_format.iter_batches(data, format=forced, **options):
            pass

    verbs: list[tuple[str, Callable[[], object]]] = [
        ("read", lambda: tachyon_format.read(data, format=forced, **options)),
        ("info", lambda: tachyon_format.info(data, format=forced)),
    ]
    if chosen.verb("iter_batches") is not None:
        verbs.append(("iter_batches", consume_batches))
    if chosen.verb("salvage") is not None:
        verbs.append(("salvage", lambda: check_salvaged(tachyon_format.read(
            data, format=forced, strict=False, **options))))
    read_ok = read_failed = salvaged = False
    for verb, call in verbs:
        started = time.monotonic()
        try:
            call()
            read_ok = read_ok or verb == "read"
            salvaged = salvaged or verb == "salvage" and read_failed
        except FormatError as exc:
            read_failed = read_failed or verb == "read"
            read_ok = read_ok or verb == "read" and exc.region
        except Exception as exc:  # noqa: BLE001 - anything else is what we look for
            raise Crash(verb, name, exc) from exc
        _check_time(verb, name, started, max_seconds)
    started = time.monotonic()
    try:
        problems = tachyon_format.validate(data, format=forced)
    except Exception as exc:  # noqa: BLE001 - validate never raises
        raise Crash("validate", name, exc) from exc
    _check_time("validate", name, started, max_seconds)
    if not isinstance(problems, list):
        raise Crash("validate", name, None, f"returned {type(problems).__name__}, not a list")
    return Reached(read_ok, salvaged)


class SalvageContractError(AssertionError):
    """``read(..., strict=False)`` returned a profile that breaks its contract."""


def check_salvaged(profile) -> None:
    """The contract of salvage (docs/validation.md#salvage): ``extras["salvage"]`` is a list
    of problems, empty for a file read whole, else first why the strict read failed (fatal),
    then what was lost (notes); the sample columns are of one length."""
    problems = profile.extras.get("salvage")
    if not isinstance(problems, list):
        raise SalvageContractError(f"extras['salvage'] is {type(problems).__name__}")
    if problems and (not problems[0].fatal or any(p.fatal for p in problems[1:])):
        raise SalvageContractError(f"fatal problems out of place: {problems}")
    samples = profile.samples
    if samples.thread.size != samples.stack.size or (
            samples.stack.size and int(samples.stack.max()) >= len(profile.stacks)):
        raise SalvageContractError("sample columns that do not match the stacks")


def _check_time(verb: str, name: str, started: float, max_seconds: float) -> None:
    took = time.monotonic() - started
    if took > max_seconds:
        raise Crash(verb, name, None, f"slow: {took:.1f} s (more than {max_seconds} s)")


def record_crash(crash: Crash, data: bytes, directory: Path, per_signature: int = 3) -> bool:
    """Keep *data* and the traceback of *crash* in *directory* (at most *per_signature*
    inputs per :meth:`Crash.signature`); whether it was kept."""
    directory.mkdir(parents=True, exist_ok=True)
    signature = re.sub(r"[^A-Za-z0-9_-]+", "_", crash.signature())
    if len(list(directory.glob(f"{signature}--*.input"))) >= per_signature:
        return False
    stem = f"{signature}--{hashlib.sha1(data).hexdigest()[:12]}"
    (directory / f"{stem}.input").write_bytes(data)
    text = "".join(traceback.format_exception(crash.error)) if crash.error else crash.note
    (directory / f"{stem}.txt").write_text(f"{crash}\n\n{text}")
    return True


def cap_address_space(max_mb: int) -> None:
    """Make an allocation past *max_mb* MiB of address space a MemoryError."""
    cap = max_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


# -- the fleet writer ---------------------------------------------------------------------------


FLEET_LABELS = {"service": "fuzz"}


class FleetContractError(AssertionError):
    """The dataset answered against docs/fleet.md after an add: a profile counted twice or
    not at all, totals that are not the sum of the added profiles, rows that do not read back
    as they were added."""


class Fleet:
    """One worker's dataset (in *directory*), reused across inputs so that adds meet tables
    already written, and started afresh after *max_adds* inputs (an add reads every file of
    the ``profiles`` table and the log of each table: its cost grows with the profiles
    already in the dataset, about 8 ms per profile); what was added to it: ``profiles``, the
    samples of each profile id."""

    def __init__(self, directory: Path, max_adds: int = 30) -> None:
        self.directory, self.max_adds = directory, max_adds
        self.generation = 0
        self.location = directory / "dataset-0"
        self.profiles: dict[str, int] = {}
        self.adds = 0
        self.fresh()

    def fresh(self) -> None:
        """An empty dataset in place of the current one."""
        shutil.rmtree(self.location, ignore_errors=True)
        self.generation += 1
        self.location = self.directory / f"dataset-{self.generation}"
        self.directory.mkdir(parents=True, exist_ok=True)
        self.profiles = {}
        self.adds = 0


def fleet_installed() -> bool:
    """Whether the fleet dataset's libraries (pyarrow, deltalake) are installed."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("pyarrow", "deltalake"))


def exercise_fleet(data: bytes, fleet: Fleet, max_seconds: float = 10.0,
                   formats: list[str] | None = None) -> bool:
    """Add *data* (as a file, in the format :func:`choose_format` picks) to *fleet*'s
    dataset and check the contract of ``fleet.dataset`` (docs/fleet.md); raise
    :class:`Crash` when it is broken: ``add`` gives its result or a ``FormatError`` naming
    the file, nothing else; the dataset reads afterwards (``summary``, the ``profiles``
    listing, the new profile's rows: without any error, not even a ``FormatError``, as
    nothing but these adds wrote the dataset); a profile added again is skipped; the
    dataset's totals are the sum of the profiles added, and each profile's samples are those
    ``read`` finds in the file. Whether the input made a profile (new or already there)."""
    from tachyon_format import FormatError
    from tachyon_format.fleet import dataset

    name, forced = choose_format(data, formats)
    if fleet.adds >= fleet.max_adds:
        fleet.fresh()
    fleet.adds += 1
    path = fleet.directory / "input"
    path.write_bytes(data)
    location = fleet.location

    def timed(verb: str, call: Callable[[], object]) -> object:
        started = time.monotonic()
        try:
            out = call()
        except FleetContractError as exc:
            raise Crash(verb, name, exc) from exc
        except Exception as exc:  # noqa: BLE001 - anything else is what we look for
            if verb == "add" and isinstance(exc, FormatError):
                if not any(str(path) in note for note in getattr(exc, "__notes__", ())):
                    raise Crash(verb, name, FleetContractError(
                        f"a FormatError that does not name the file: {exc}")) from exc
                raise
            raise Crash(verb, name, exc) from exc
        _check_time(verb, name, started, max_seconds)
        return out

    # both ways a file is written, chosen from the bytes: counted per (stack, thread, status)
    # or one row per sample (streamed); Tachyon in one batch or in batches of 7 samples
    choice = zlib.crc32(data) >> 8
    options = {"timestamps": bool(choice & 1), "samples_per_batch": 7 if choice & 2 else 1 << 20}

    def add() -> list:
        return dataset.add(location, [path], format=forced, labels=FLEET_LABELS, **options)

    try:
        (added,) = timed("add", add)
    except FormatError:
        made = False
    else:
        made = True
        timed("contract", lambda: _check_added(data, forced, added, fleet))
        if not added.skipped:
            again = timed("add again", add)
            if not (len(again) == 1 and again[0].skipped
                    and again[0].profile_id == added.profile_id):
                raise Crash("add again", name, FleetContractError(
                    f"a profile added twice was not skipped the second time: {again}"))
    listing = timed("profiles", lambda: dataset.profiles(location)) \
        if location.exists() else None
    if listing is None:  # (no input made it past the manifest yet)
        return made
    facts = timed("summary", lambda: dataset.summary(location))
    rows = {row["profile_id"]: row for row in listing.select(
        ["profile_id", "write_id", "num_samples"]).to_pylist()}
    timed("contract", lambda: _check_totals(fleet, facts, rows))
    if made and not added.skipped:
        counts = timed("load_counts", lambda: dataset.load_counts(
            location, added.profile_id, rows[added.profile_id]["write_id"]))
        if counts.num_samples != added.num_samples:
            raise Crash("load_counts", name, FleetContractError(
                f"{counts.num_samples} samples read back, {added.num_samples} added"))
    return made


def _check_added(data: bytes, forced: str | None, added, fleet: Fleet) -> None:
    """One add's result against what was added before and against ``read``."""
    import tachyon_format

    known = added.profile_id in fleet.profiles
    if added.skipped != known:
        raise FleetContractError(f"{'skipped' if added.skipped else 'added'} a profile "
                                 f"{'not ' if added.skipped else ''}in the dataset: {added}")
    if added.skipped:
        return
    found = samples_kept(tachyon_format.read(data, format=forced))
    if found != added.num_samples:
        raise FleetContractError(f"{added.num_samples} samples added, read finds {found}")
    fleet.profiles[added.profile_id] = added.num_samples


def samples_kept(profile) -> int:
    """The samples of *profile* a dataset counts: those with a stack (docs/fleet.md: samples
    with an empty stack are not written)."""
    import numpy as np

    weights = np.asarray(profile.sample_counts(), np.int64)
    return int(weights[profile.samples.stack >= 0].sum())


def _check_totals(fleet: Fleet, facts: dict, rows: dict[str, dict]) -> None:
    """The listing and the summary against the profiles added."""
    listed = {pid: row["num_samples"] for pid, row in rows.items()}
    if listed != fleet.profiles:
        raise FleetContractError(f"the profiles listed are not those added: {listed} "
                                 f"!= {fleet.profiles}")
    if (facts["profiles"], facts["samples"]) != (len(fleet.profiles),
                                                 sum(fleet.profiles.values())):
        raise FleetContractError(f"summary says {facts['profiles']} profiles and "
                                 f"{facts['samples']} samples; added: {len(fleet.profiles)} "
                                 f"and {sum(fleet.profiles.values())}")


# -- a worker: one libFuzzer process -----------------------------------------------------------


WALK = "tachyon_format.formats.tachyon.region.walk"


def load_walk(path: str) -> None:
    """Use the record walk built at *path* (the AddressSanitizer build) in this process."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(WALK, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[WALK] = module
    spec.loader.exec_module(module)
    from tachyon_format.formats.tachyon.region import engines

    info = engines.decoder_info()
    if info["active"] != "compiled" or info["compiled_module"] != path:
        raise SystemExit(f"the AddressSanitizer build of the walk is not in use: {info}")


def build_asan_walk(directory: Path) -> str:
    """The record walk compiled with AddressSanitizer into *directory*; its path."""
    env = {**os.environ,
           "TACHYON_FORMAT_CFLAGS": "-fsanitize=address -fno-omit-frame-pointer -g"}
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib",
                    str(directory / "lib"), "--build-temp", str(directory / "temp")],
                   cwd=REPO, env=env, check=True)
    built = sorted((directory / "lib").rglob("walk*.so"))
    if not built:
        raise SystemExit("the walk did not build with AddressSanitizer (see above)")
    return str(built[0])


def asan_environment() -> dict[str, str]:
    """Workers' environment: gcc's sanitizer runtime preloaded (Python itself is not built
    with it), leaks not reported (the interpreter's own), a failure aborts the worker."""
    runtime = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                             text=True, check=True).stdout.strip()
    return {**os.environ, "LD_PRELOAD": str(Path(runtime).resolve()),
            "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"}


def mutate_region(data: bytes, max_size: int, seed: int) -> bytes:
    """libFuzzer's custom mutator for ``--region``: a Tachyon file with its sample region
    mutated (raw, the table offsets moved by the change in length), or *data* mutated whole
    when it is not a readable Tachyon file of the current layout."""
    import atheris

    from tachyon_format.errors import FormatError
    from tachyon_format.formats.tachyon.file import open_file
    from tachyon_format.schema import tachyon_plain as plain

    try:
        meta = open_file(data, tables=False)
        region = bytes(meta.region()) if meta.layout == "L3" else None
    except FormatError:
        region = None
    if region is None:
        return atheris.Mutate(data, max_size)
    start, end = meta.region_span
    rest = bytes(data[end:])
    mutated = atheris.Mutate(region, max(len(region) + 64, max_size - start - len(rest)))
    head = bytearray(data[:start])
    endian = "little" if meta.order == "<" else "big"
    for name in ("string_table_offset", "frame_table_offset"):
        at = plain.HEADER.offset(name)
        moved = int.from_bytes(head[at : at + 8], endian) + len(mutated) - (end - start)
        head[at : at + 8] = moved.to_bytes(8, endian)
    at = plain.HEADER.offset("compression")
    head[at : at + 4] = bytes(4)  # raw: the mutated bytes are the region as written
    return bytes(head) + mutated + rest


def blind_mutator(corpus: Path, mutate: Callable | None) -> Callable[[bytes, int, int], bytes]:
    """The mutator of ``--no-coverage``: each input is one to four mutations of a seed of
    *corpus* chosen by libFuzzer's random seed (with *mutate*, else libFuzzer's own). Without
    coverage libFuzzer keeps no input of its corpus as interesting (it would go on mutating a
    single empty input), so the seeds are held here."""
    import atheris

    seeds = [p.read_bytes() for p in sorted(corpus.iterdir()) if p.is_file()] or [b""]
    step = mutate or (lambda data, max_size, seed: atheris.Mutate(data, max_size))

    def blind(data: bytes, max_size: int, seed: int) -> bytes:
        out = seeds[seed % len(seeds)][:max_size]
        for k in range(1 + (seed >> 8) % 4):
            out = step(out, max_size, seed + k)
        return out

    return blind


def worker(args: argparse.Namespace, libfuzzer_argv: list[str]) -> None:
    import atheris

    if not args.asan_walk:  # (the sanitizer reserves terabytes of address space)
        cap_address_space(args.max_mb)
    with (atheris.instrument_imports(include=["tachyon_format"]) if args.coverage
          else contextlib.nullcontext()):
        if args.asan_walk:
            load_walk(args.asan_walk)
        import tachyon_format
        from tachyon_format import FORMATS

        for f in FORMATS.values():  # the verbs' modules load lazily: instrument them now
            for verb in ("sniff", "read", "iter_batches", "info", "validate", "salvage"):
                f.verb(verb)
        if args.fleet_dir:
            import tachyon_format.fleet.dataset  # noqa: F401 (instrumented with the rest)
        del tachyon_format
    formats = args.formats.split(",") if args.formats else None
    crash_dir = Path(args.crash_dir)
    stats_file = Path(args.stats_file)
    state = {"runs": 0, "crashes": 0, "read": 0, "salvaged": 0, "written": time.monotonic()}
    fleet = Fleet(Path(args.fleet_dir), args.fleet_adds) if args.fleet_dir else None
    last = next((int(a[6:]) for a in libfuzzer_argv if a.startswith("-runs=")), -1)

    def one_input(data: bytes) -> None:
        state["runs"] += 1
        try:
            if fleet is not None:  # (read: the input made a profile of the dataset)
                state["read"] += exercise_fleet(data, fleet, args.max_seconds, formats)
            else:
                reached = exercise(data, args.max_seconds, formats)
                state["read"] += reached.samples
                state["salvaged"] += reached.salvaged
        except Crash as crash:
            state["crashes"] += 1
            record_crash(crash, data, crash_dir)
            if args.stop_on_crash:
                raise
        except MemoryError as exc:  # raised outside a verb (e.g. while sniffing)
            state["crashes"] += 1
            record_crash(Crash("?", "?", exc), data, crash_dir)
        now = time.monotonic()
        if now - state["written"] > 2 or state["runs"] % 500 == 0 or state["runs"] == last:
            state["written"] = now
            stats_file.write_text(json.dumps({k: state[k] for k in ("runs", "crashes", "read",
                                                                    "salvaged")}))

    mutate = mutate_region if args.region else None
    if not args.coverage:
        mutate = blind_mutator(Path(libfuzzer_argv[-1]), mutate)
    atheris.Setup([sys.argv[0], *libfuzzer_argv], one_input, custom_mutator=mutate)
    atheris.Fuzz()


# -- the parent: corpus, workers, summary ------------------------------------------------------


DONE = re.compile(r"Done (\d+) runs in (\d+) second")


def run(args: argparse.Namespace, libfuzzer_argv: list[str]) -> int:
    """Seed the corpus, run ``--jobs`` workers (each restarted, up to ``--restarts`` times,
    when libFuzzer stops it on a hard timeout or memory limit), print the summary."""
    corpus = Path(args.corpus) if args.corpus else Path(tempfile.mkdtemp(prefix="fuzz-corpus-"))
    num_seeds = write_seed_corpus(corpus, args.formats.split(",") if args.formats else None)
    crash_dir = Path(args.crash_dir)
    crash_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="fuzz-run-"))
    per_job = [args.runs // args.jobs + (k < args.runs % args.jobs) for k in range(args.jobs)]
    env = None
    if args.asan:
        args.asan_walk = build_asan_walk(scratch / "asan")
        env = asan_environment()
        print(f"the walk under AddressSanitizer: {args.asan_walk}", flush=True)
    print(f"fuzzing: {num_seeds} seed files in {corpus}, {args.runs} inputs over "
          f"{args.jobs} worker(s), crashes to {crash_dir}", flush=True)
    started = time.monotonic()
    done = [0] * args.jobs
    stops: list[str] = []

    def slot(k: int) -> None:
        for attempt in range(args.restarts + 1):
            if done[k] >= per_job[k]:
                return
            stats = scratch / f"worker-{k}-{attempt}.json"
            log_path = scratch / f"worker-{k}-{attempt}.log"
            command = [sys.executable, __file__, "--worker", "--stats-file", str(stats),
                       "--crash-dir", str(crash_dir), "--max-mb", str(args.max_mb),
                       "--max-seconds", str(args.max_seconds), "--formats", args.formats,
                       *(["--stop-on-crash"] if args.stop_on_crash else []),
                       *([] if args.coverage else ["--no-coverage"]),
                       *(["--region"] if args.region else []),
                       *(["--fleet-dir", str(scratch / f"fleet-{k}"), "--fleet-adds",
                          str(args.fleet_adds)] if args.fleet else []),
                       *(["--asan-walk", args.asan_walk] if args.asan_walk else []), "--",
                       f"-runs={per_job[k] - done[k]}", f"-seed={args.seed + k + 1000 * attempt}",
                       f"-max_len={args.max_len}", f"-timeout={args.hard_timeout}",
                       f"-rss_limit_mb={args.max_mb}", f"-artifact_prefix={crash_dir}/",
                       *libfuzzer_argv, str(corpus)]
            with open(log_path, "wb") as log:
                returncode = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT,
                                             env=env)
            text = log_path.read_text(errors="replace")
            finished = DONE.findall(text)
            ran = (int(finished[-1][0]) if finished else
                   json.loads(stats.read_text())["runs"] if stats.exists() else 0)
            done[k] += ran
            if returncode:
                tail = "\n".join(text.splitlines()[-12:])
                stops.append(f"worker {k} stopped (exit {returncode}) after {ran} inputs:\n{tail}")
                print(stops[-1], file=sys.stderr, flush=True)
                if args.stop_on_crash:
                    return

    threads = [threading.Thread(target=slot, args=(k,), daemon=True) for k in range(args.jobs)]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        for thread in threads:
            thread.join(timeout=args.progress)
        if any(thread.is_alive() for thread in threads) and args.progress:
            print(f"... {time.monotonic() - started:.0f} s, at least "
                  f"{sum(done) + _running_count(scratch)} inputs", flush=True)
    seconds = time.monotonic() - started
    total = sum(done)
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    sampled = [json.loads(p.read_text()) for p in scratch.glob("worker-*.json")]
    runs_seen = max(1, sum(s["runs"] for s in sampled))
    read_share = sum(s.get("read", 0) for s in sampled) / runs_seen
    salvaged_share = sum(s.get("salvaged", 0) for s in sampled) / runs_seen
    crashes = sorted(p.name for p in crash_dir.glob("*.input"))
    depth = (f"{read_share:.0%} of the inputs made a profile of the dataset" if args.fleet
             else f"{read_share:.0%} of the inputs got to the samples, {salvaged_share:.0%} "
             "were salvaged after the strict read failed")
    print(f"fuzzed {total} inputs in {seconds:.0f} s ({total / max(seconds, 1e-9):.1f}/s "
          f"over {args.jobs} worker(s)); peak memory {peak_mb:.0f} MiB (largest worker RSS); "
          f"{len(crashes)} crash input(s), {len(stops)} worker stop(s); crashes in "
          f"{crash_dir}; {depth}", flush=True)
    for name in crashes:
        print(f"  {name}")
    if not args.corpus:
        shutil.rmtree(corpus, ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)
    return 1 if crashes or stops else 0


def _running_count(scratch: Path) -> int:
    """Inputs the running workers have reported so far (their stats files)."""
    total = 0
    for stats in scratch.glob("worker-*.json"):
        log = stats.with_suffix(".log")
        if log.exists() and DONE.search(log.read_text(errors="replace")):
            continue  # finished: already counted
        with contextlib.suppress(OSError, ValueError):
            total += json.loads(stats.read_text())["runs"]
    return total


# -- one input again: replay, minimize ---------------------------------------------------------


def replay(path: Path, max_seconds: float, fleet: bool = False) -> int:
    """Run one input (with *fleet*: add it to a new dataset) and show its traceback."""
    try:
        check(path.read_bytes(), max_seconds, fleet)
    except Crash as crash:
        if crash.error is not None:
            traceback.print_exception(crash.error)
        print(crash, file=sys.stderr)
        return 1
    print(f"{path}: no crash")
    return 0


def check(data: bytes, max_seconds: float, fleet: bool) -> None:
    """:func:`exercise` *data*, or with *fleet* :func:`exercise_fleet` it on a new dataset
    (which shows what one add breaks, not what an add meeting earlier inputs' tables does)."""
    if not fleet:
        exercise(data, max_seconds)
        return
    with tempfile.TemporaryDirectory(prefix="fuzz-fleet-") as scratch:
        exercise_fleet(data, Fleet(Path(scratch)), max_seconds)


def minimize(path: Path, max_seconds: float, out: Path | None, fleet: bool = False) -> int:
    """Delta debugging: drop chunks of the input while the same crash signature remains."""
    data = path.read_bytes()

    def signature(candidate: bytes) -> str | None:
        try:
            check(candidate, max_seconds, fleet)
        except Crash as crash:
            return crash.signature()
        return None

    wanted = signature(data)
    if wanted is None:
        print(f"{path}: no crash to minimize", file=sys.stderr)
        return 1
    chunk = max(len(data) // 2, 1)
    while chunk >= 1:
        i, shrunk = 0, False
        while i < len(data):
            candidate = data[:i] + data[i + chunk:]
            if candidate and signature(candidate) == wanted:
                data, shrunk = candidate, True
            else:
                i += chunk
        if not shrunk:
            chunk //= 2
    target = out or path.with_suffix(".min")
    target.write_bytes(data)
    print(f"{wanted}: {path.stat().st_size} -> {len(data)} bytes in {target}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The command line (arguments after ``--`` go to libFuzzer, not here)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="arguments after -- go to libFuzzer")
    parser.add_argument("--runs", type=int, default=10_000, help="inputs in all (default "
                        "%(default)s)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--formats", default="", help="comma-separated formats to fuzz "
                        "(default: every readable one)")
    parser.add_argument("--crash-dir", default="fuzz-crashes", help="where crash inputs and "
                        "tracebacks go (default: %(default)s)")
    parser.add_argument("--corpus", help="corpus directory to keep (default: a temporary one)")
    parser.add_argument("--max-seconds", type=float, default=10.0, help="a verb slower than "
                        "this on one input is a crash (default %(default)s)")
    parser.add_argument("--hard-timeout", type=int, default=120, help="libFuzzer kills a "
                        "worker stuck this long on one input (default %(default)s)")
    parser.add_argument("--max-mb", type=int, default=4096, help="address-space cap of a "
                        "worker, MiB: a larger allocation is a MemoryError crash")
    parser.add_argument("--max-len", type=int, default=1 << 16, help="largest input, bytes")
    parser.add_argument("--seed", type=int, default=1, help="libFuzzer's seed (worker k: +k)")
    parser.add_argument("--no-coverage", dest="coverage", action="store_false",
                        help="do not instrument the library for coverage: blind mutation, "
                        "several times more inputs per second")
    parser.add_argument("--restarts", type=int, default=20, help="times a worker stopped by "
                        "libFuzzer (hard timeout, RSS limit) is started again")
    parser.add_argument("--progress", type=float, default=60, help="seconds between progress "
                        "lines (0: none)")
    parser.add_argument("--stop-on-crash", action="store_true")
    parser.add_argument("--asan", action="store_true", help="fuzz the compiled record walk "
                        "built with AddressSanitizer (needs gcc)")
    parser.add_argument("--asan-walk", help=argparse.SUPPRESS)
    parser.add_argument("--region", action="store_true", help="Tachyon: mutate only the "
                        "sample region, keeping the rest of the file valid (every input "
                        "reaches the record walk)")
    parser.add_argument("--fleet", action="store_true", help="add each input to a fleet "
                        "dataset (one per worker, reused) and check the dataset's contract, "
                        "instead of the read verbs (needs the fleet extra)")
    parser.add_argument("--fleet-adds", type=int, default=30, help="--fleet: inputs added "
                        "to a worker's dataset before it starts a new one (default "
                        "%(default)s)")
    parser.add_argument("--fleet-dir", help=argparse.SUPPRESS)
    parser.add_argument("--replay", type=Path, help="run one input and show its traceback")
    parser.add_argument("--minimize", type=Path, help="shrink one crash input")
    parser.add_argument("--out", type=Path, help="where --minimize writes (default: .min)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--stats-file", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ours, libfuzzer = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) \
        if "--" in argv else (argv, [])
    args = build_parser().parse_args(ours)
    if args.asan_walk:  # (run with tools/fuzz.py's asan_environment() to see the traces)
        load_walk(args.asan_walk)
    elif args.replay or args.minimize:  # the workers' address-space cap: a crash repeats
        cap_address_space(args.max_mb)
    if args.replay:
        return replay(args.replay, args.max_seconds, args.fleet)
    if args.minimize:
        return minimize(args.minimize, args.max_seconds, args.out, args.fleet)
    if args.worker:
        worker(args, libfuzzer)
        return 0
    try:
        import atheris  # noqa: F401
    except ImportError:
        print("atheris is not installed: pip install atheris", file=sys.stderr)
        return 2
    if args.fleet and not fleet_installed():
        print("--fleet needs the fleet extra: pip install 'tachyon-format[fleet]'",
              file=sys.stderr)
        return 2
    return run(args, libfuzzer)


if __name__ == "__main__":
    sys.exit(main())

"""speedscope itself (npm ``speedscope``, its bundled importer under Node) reads what we
write, and shows the totals our Profile holds; and it reads CPython's collapsed output of
the same runs to the same totals."""

from __future__ import annotations

import os
from collections import defaultdict

import pytest

import tachyon_format
from tachyon_format.formats.speedscope.writer import build
from tests.helpers.paths import DATA_DIR, SHARED_FIXTURES
from tests.helpers.speedscope import (
    evented_durations,
    frame_totals,
    model_totals,
    speedscope_import,
)

GOLDEN = sorted(DATA_DIR.glob("*.bin"))
SPEEDSCOPE_FIXTURES = SHARED_FIXTURES / "speedscope" / "jlfwong-speedscope" / "sample" / \
    "profiles" / "speedscope"


def _thread_names(profile):
    return {row: f"Thread {t}" + (f" (interpreter {i})" if i else "")
            for row, (i, t) in enumerate(zip(profile.threads.interpreter_id.tolist(),
                                             profile.threads.thread_id.tolist(), strict=True))}


def _nonzero(table):
    out = {name: {k: v for k, v in frames.items() if v != (0, 0)}
           for name, frames in table.items()}
    return {name: frames for name, frames in out.items() if frames}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Every golden Tachyon file as sampled and evented speedscope files, and speedscope's
    import of them (one Node run)."""
    out = tmp_path_factory.mktemp("speedscope")
    paths, profiles = [], {}
    for source in GOLDEN:
        profile = tachyon_format.read(source)
        profiles[source.stem] = profile
        for kind in ("sampled", "evented"):
            path = out / f"{source.stem}.{kind}.speedscope.json"
            path.write_bytes(build(profile, kind=kind, interval_us=1000))
            paths.append(path)
    shown = {os.path.basename(r["file"]): r for r in speedscope_import(*paths)}
    return profiles, shown


@pytest.mark.parametrize("source", GOLDEN, ids=lambda p: p.stem)
def test_speedscope_shows_our_sampled_totals(written, source):
    profiles, shown = written
    profile = profiles[source.stem]
    result = shown[f"{source.stem}.sampled.speedscope.json"]
    assert "error" not in result, result.get("error")
    expected = model_totals(profile, _thread_names(profile))
    assert _nonzero(frame_totals(result)) == _nonzero(expected)
    totals = {p["name"]: p["total"] for p in result["profiles"] if p["total"]}
    per_thread = defaultdict(int)
    for row in profile.samples.thread.tolist():
        per_thread[_thread_names(profile)[row]] += 1
    assert totals == dict(per_thread)


@pytest.mark.parametrize("source", GOLDEN, ids=lambda p: p.stem)
def test_speedscope_shows_our_evented_totals(written, source):
    profiles, shown = written
    profile = profiles[source.stem]
    result = shown[f"{source.stem}.evented.speedscope.json"]
    assert "error" not in result, result.get("error")
    durations = evented_durations(profile, 1000)
    expected = model_totals(profile, _thread_names(profile), durations)
    assert _nonzero(frame_totals(result)) == _nonzero(expected)


INTERNAL_SUFFIXES = ("_sync_coordinator.py",)
"""Files whose frames CPython's collectors leave out (``constants._INTERNAL_FRAME_SUFFIXES``)."""


def _collapsed_model(profile) -> dict[str, int]:
    """What speedscope should show for CPython's collapsed output of *profile*, from the
    model one sample at a time: per ``tid:N`` the samples with a stack left after CPython's
    filter, per frame (named as stack_collector.py names it) the samples holding it."""
    texts, frames = profile.strings.texts(), profile.frames
    tuples = profile.stacks.tuples()
    out: dict[str, int] = defaultdict(int)
    for thread, stack in zip(profile.samples.thread.tolist(), profile.samples.stack.tolist(),
                             strict=True):
        keys = set()
        for row in tuples[stack]:
            file = texts[frames.filename[row]]
            if file.endswith(INTERNAL_SUFFIXES):
                continue
            line = max(int(frames.lineno[row]), 0)
            func = texts[frames.funcname[row]]
            keys.add(func if file == "~" and line == 0 else
                     f"{os.path.basename(file)}:{func}:{line}")
        if keys:
            out[f"tid:{int(profile.threads.thread_id[thread])}"] += 1
        for key in keys:
            out[key] += 1
    return dict(out)


@pytest.mark.parametrize("source", GOLDEN, ids=lambda p: p.stem)
def test_speedscope_reads_cpython_collapsed_to_our_totals(written, source):
    """CPython's ``replay --collapsed`` of the same file, read by speedscope: per thread and
    per frame the totals our Profile gives (and, by the tests above, our speedscope output)."""
    collapsed = source.with_suffix(".collapsed.txt")
    expected = _collapsed_model(written[0][source.stem])
    if not collapsed.read_text().strip():
        assert expected == {}
        return
    (theirs,) = speedscope_import(collapsed)
    assert "error" not in theirs, theirs.get("error")
    (shown,) = theirs["profiles"]
    assert {f["name"]: f["total"] for f in shown["frames"]} == expected


def test_speedscope_and_we_read_its_own_fixtures_alike():
    if not SPEEDSCOPE_FIXTURES.is_dir():
        pytest.skip(f"no speedscope fixtures at {SPEEDSCOPE_FIXTURES}")
    paths = sorted(SPEEDSCOPE_FIXTURES.rglob("*.json"))
    assert len(paths) >= 6
    for result in speedscope_import(*paths):
        if "error" in result:  # speedscope refuses it: so must we
            with pytest.raises(tachyon_format.FormatError):
                tachyon_format.read(result["file"])
            continue
        profile = tachyon_format.read(result["file"])
        facts = profile.extras["speedscope"]
        names = {p.thread: p.name for p in facts.profiles}
        assert [p["name"] for p in result["profiles"]] == [p.name for p in facts.profiles]
        assert frame_totals(result) == model_totals(profile, names)


def _native_fixtures():
    files = sorted(p for p in (SHARED_FIXTURES / "pprof_proto").rglob("*")
                   if p.is_file() and p.suffix != ".proto")
    files += sorted((SHARED_FIXTURES / "gperftools_cpu").rglob("*.cpu"))
    files += sorted((DATA_DIR / "gperftools").glob("*.prof"))
    return files


def test_speedscope_shows_our_output_of_pprof_and_gperftools_profiles(tmp_path):
    """Every pprof and gperftools file we have (frames with only addresses, several sample
    types, labels, no threads): written sampled, shown with the default sample type's
    totals per frame."""
    files = _native_fixtures()
    if not any(SHARED_FIXTURES.rglob("*.cpu")):
        pytest.skip(f"no shared fixtures at {SHARED_FIXTURES}")
    paths, profiles = [], []
    for k, source in enumerate(files):
        profile = tachyon_format.read(source)
        path = tmp_path / f"{k}.speedscope.json"
        tachyon_format.write(profile, path)
        paths.append(path)
        profiles.append(profile)
    for source, profile, result in zip(files, profiles, speedscope_import(*paths),
                                       strict=True):
        assert "error" not in result, (source, result.get("error"))
        names = {-1: "samples without a thread", **_thread_names(profile)}
        assert _nonzero(frame_totals(result)) == _nonzero(model_totals(profile, names)), source

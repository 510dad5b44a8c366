"""``schema/opcodes.py``: CPython 3.15 opcode names without the running interpreter's ``dis``.

The first tests run on any Python: the numbers below are 3.15's, and most of them name other
instructions in 3.11..3.14 (163 is ``SET_UPDATE`` in 3.11), so a table borrowed from the
running ``dis`` fails them. The ``@requires_reference`` tests ask CPython 3.15 itself: the
committed table is what ``tools/gen_opcodes.py`` generates now, and every name equals its
``dis.opname``, including those of the opcodes in a file its profiler wrote.
"""

from __future__ import annotations

import ast
import json
import subprocess

import numpy as np
import pytest

import tachyon_format
from tachyon_format.schema import opcodes
from tachyon_format.schema.opcodes import (
    BASE_OPCODES,
    OPNAMES,
    base_opcode,
    base_opcode_name,
    opcode_name,
)
from tests.helpers.paths import REPO
from tests.helpers.reference import requires_reference, run_reference

GENERATOR = REPO / "tools" / "gen_opcodes.py"
SCHEMA = REPO / "src" / "tachyon_format" / "schema"
OPCODES_GOLDEN = REPO / "tests" / "data" / "threads_cpu_opcodes_raw.bin"

# Families whose specialized names do not start with the family's name.
UNPREFIXED_FAMILIES = {"CALL_EX_PY": "CALL_FUNCTION_EX",
                       "CALL_EX_NON_PY_GENERAL": "CALL_FUNCTION_EX"}


def golden_opcodes() -> list[int]:
    """The distinct captured opcodes of the frames of the ``--opcodes`` golden file."""
    column = tachyon_format.read(OPCODES_GOLDEN).frames.opcode
    return sorted(int(op) for op in np.unique(column) if op >= 0)


# --- any Python -------------------------------------------------------------------------------

@pytest.mark.parametrize(("number", "name"), [
    (0, "CACHE"),
    (42, "BINARY_OP"),
    (128, "RESUME"),
    (130, "BINARY_OP_ADD_INT"),
    (163, "CALL_NON_PY_GENERAL"),   # SET_UPDATE in 3.11
    (186, "LOAD_ATTR_INSTANCE_VALUE"),
    (200, "RESUME_CHECK"),
    (249, "INSTRUMENTED_CALL"),
    (254, "ENTER_EXECUTOR"),
])
def test_names_are_those_of_315(number, name):
    assert opcode_name(number) == name
    assert opcode_name(np.int16(number)) == name   # a value from Profile.frames.opcode


@pytest.mark.parametrize("not_captured", [None, -1, 255, np.int16(-1)])
def test_not_captured_has_no_name(not_captured):
    assert opcode_name(not_captured) is None
    assert base_opcode_name(not_captured) is None


def test_not_captured_keeps_its_number():
    assert base_opcode(-1) == -1
    assert base_opcode(255) == 255


def test_unassigned_numbers_are_named_like_dis():
    assert OPNAMES[120] is None
    assert opcode_name(120) == "<120>"
    assert base_opcode(120) == 120


@pytest.mark.parametrize("number", [-2, 256, 300])
def test_numbers_a_frame_cannot_hold_are_rejected(number):
    with pytest.raises(ValueError, match="outside 0..255"):
        opcode_name(number)
    with pytest.raises(ValueError, match="outside 0..255"):
        base_opcode(number)


def test_table_shape():
    assert len(OPNAMES) == 256
    assert opcodes.PYTHON_VERSION[:2] == (3, 15)
    assert all(name is None or name.isidentifier() for name in OPNAMES)
    assert len({name for name in OPNAMES if name}) == sum(1 for name in OPNAMES if name)


@pytest.mark.parametrize(("number", "family"), [
    (186, "LOAD_ATTR"), (130, "BINARY_OP"), (163, "CALL"), (200, "RESUME"),
    (249, "CALL"), (244, "RESUME"), (42, "BINARY_OP"), (254, "ENTER_EXECUTOR"),
    (253, "INSTRUMENTED_LINE"), (237, "INSTRUMENTED_INSTRUCTION"),
])
def test_base_opcode_spot_checks(number, family):
    assert base_opcode_name(number) == family
    assert opcode_name(base_opcode(number)) == family


def test_every_family_member_maps_to_its_family_by_name():
    for number, base in BASE_OPCODES.items():
        name, family = OPNAMES[number], OPNAMES[base]
        assert base not in BASE_OPCODES, f"{name}: {family} is itself specialized"
        if name.startswith("INSTRUMENTED_"):
            assert name == f"INSTRUMENTED_{family}"
        else:
            assert (name.startswith(f"{family}_")
                    or UNPREFIXED_FAMILIES.get(name) == family), f"{name} -> {family}"


def test_instrumented_opcodes_without_a_family_are_the_two_of_instrumentation_c():
    """``DE_INSTRUMENT`` (Python/instrumentation.c) has no entry for LINE and INSTRUCTION."""
    alone = {name for n, name in enumerate(OPNAMES)
             if name and name.startswith("INSTRUMENTED_") and n not in BASE_OPCODES}
    assert alone == {"INSTRUMENTED_LINE", "INSTRUMENTED_INSTRUCTION"}


def test_no_run_time_dependence_on_dis_or_opcode():
    """Both modules import only each other and the schema: no dis, opcode, numpy."""
    for module in ("opcodes.py", "opcodes_315.py"):
        tree = ast.parse((SCHEMA / module).read_text(encoding="utf-8"))
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for alias in node.names}
        imported |= {node.module for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom) and node.level == 0}
        assert imported <= {"__future__", "operator"}, (module, imported)


def test_golden_file_opcodes_all_have_names():
    found = golden_opcodes()
    assert len(found) > 20
    assert all(OPNAMES[number] is not None for number in found), found
    assert any(number in BASE_OPCODES for number in found)  # the file holds specialized ones


# --- against CPython 3.15 ---------------------------------------------------------------------

_DUMP_315 = """
import dis, json, opcode, sys
print(json.dumps({"version": list(sys.version_info[:3]), "opname": dis.opname[:256],
                  "specialized": opcode._specialized_opmap, "deoptmap": dis.deoptmap}))
"""


@pytest.fixture(scope="module")
def cpython_315() -> dict:
    return json.loads(run_reference(_DUMP_315).stdout)


@requires_reference
def test_committed_table_is_current():
    """If this fails after an update of the reference: python3.15 tools/gen_opcodes.py."""
    assert run_reference(GENERATOR, "--check").returncode == 0


@requires_reference
def test_check_mode_detects_a_stale_table(tmp_path):
    table = tmp_path / "opcodes_315.py"
    run_reference(GENERATOR, "--out", str(table))
    run_reference(GENERATOR, "--check", "--out", str(table))
    table.write_text(table.read_text(encoding="utf-8").replace('"CACHE"', '"CASH"'),
                     encoding="utf-8")
    with pytest.raises(subprocess.CalledProcessError) as stale:
        run_reference(GENERATOR, "--check", "--out", str(table))
    assert stale.value.returncode == 1
    assert '-    "CASH",  # 0' in stale.value.stdout


@requires_reference
def test_every_name_is_dis_opname_of_315(cpython_315):
    assert list(opcodes.PYTHON_VERSION) == cpython_315["version"]
    for number, name in enumerate(cpython_315["opname"]):
        assert OPNAMES[number] == (None if name == f"<{number}>" else name), number
        if number != 255:
            assert opcode_name(number) == name


@requires_reference
def test_specialized_numbers_and_families_are_those_of_315(cpython_315):
    specialized = {name: number for name, number in cpython_315["specialized"].items()
                   if number < 256}
    assert {OPNAMES[number]: number for number in specialized.values()} == specialized
    for name, family in cpython_315["deoptmap"].items():
        assert base_opcode_name(specialized[name]) == family, name
    instrumented = {n for n in BASE_OPCODES if OPNAMES[n].startswith("INSTRUMENTED_")}
    assert set(BASE_OPCODES) == set(specialized.values()) | instrumented


@requires_reference
def test_golden_file_opcodes_are_named_as_315_names_them(cpython_315):
    for number in golden_opcodes():
        assert opcode_name(number) == cpython_315["opname"][number], number

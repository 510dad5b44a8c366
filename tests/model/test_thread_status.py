"""``ThreadStatus``: what the model's ``status`` column means, the same bits as CPython's."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import tachyon_format
from tachyon_format.model import ThreadStatus
from tests.helpers.paths import REPO
from tests.helpers.reference import requires_reference, run_reference


@requires_reference
def test_the_bits_are_cpython_s():
    code = ("import json, _remote_debugging as m; print(json.dumps({n: getattr(m, n) "
            "for n in dir(m) if n.startswith('THREAD_STATUS_')}))")
    theirs = json.loads(run_reference(code).stdout)
    assert {f"THREAD_STATUS_{bit.name}": int(bit) for bit in ThreadStatus} == theirs


def test_one_class_under_every_name():
    from tachyon_format.schema import tachyon, tachyon_values

    assert tachyon_format.ThreadStatus is ThreadStatus
    assert tachyon.ThreadStatus is ThreadStatus  # (for the spec page of the sample region)
    assert not hasattr(tachyon_values, "ThreadStatus")  # the values are the file's only


def test_the_schema_and_the_status_bits_load_no_numpy():
    """The schema is construct only: documenting the status byte must not load the model's
    numpy columns, nor must the command line's status filter."""
    code = ("import sys; import tachyon_format.schema.tachyon; "
            "from tachyon_format import ThreadStatus; ThreadStatus.HAS_GIL; "
            "print('numpy' in sys.modules)")
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env).stdout
    assert out.strip() == "False"

"""docs/fleet.md: its Python blocks run in order (on a real two-worker LocalCluster, as the
page shows), its SQL runs in DuckDB over a generated dataset and answers as
``tachyon_format.analysis`` does on the same files read one by one (the views leave out a
write that did not commit), its command lines parse,
and the page is linked."""

from __future__ import annotations

import contextlib
import io
import re
import shlex

import pytest

import tachyon_format
from tachyon_format.analysis import diff, function_table, merge
from tachyon_format.cli.main import build_parser
from tests.fleet.conftest import write_fleet
from tests.helpers.paths import REPO

PAGE = REPO / "docs" / "fleet.md"
TEXT = PAGE.read_text(encoding="utf-8")
SQL = re.findall(r"```sql\n(.*?)```", TEXT, re.S)


def one_machine(paths):
    return merge([tachyon_format.read(p) for p in paths], sample_type="samples", force=True)


def test_python_blocks_run_in_order(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow", reason="the fleet needs pyarrow (the fleet extra)")
    pytest.importorskip("distributed", reason="the page's cluster needs dask.distributed")
    pytest.importorskip("duckdb", reason="the page's SQL needs DuckDB (the sql extra)")
    monkeypatch.chdir(tmp_path)
    paths = write_fleet(tmp_path / "profiles" / "v1", 4, 0) + write_fleet(
        tmp_path / "profiles" / "v2", 4, 50)
    namespace: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for index, block in enumerate(re.findall(r"```python\n(.*?)```", TEXT, re.S)):
            exec(compile(block, f"{PAGE.name} block {index}", "exec"), namespace)
    assert printed.getvalue().startswith("8 profiles")
    expected = function_table(one_machine(paths))
    assert namespace["hot"].rows() == sorted(expected.rows(),
                                             key=lambda r: (-r[1], -r[2], r[0]))[:10]
    assert function_table(tachyon_format.read("fleet.pb.gz")).total == expected.total
    assert (tmp_path / "fleet.collapsed").stat().st_size > 0


@pytest.fixture(scope="module")
def duckdb_views(fleet_dataset):
    duckdb = pytest.importorskip("duckdb", reason="the SQL needs DuckDB (the sql extra)")
    from tachyon_format.fleet import dataset

    connection = duckdb.connect()
    connection.execute("SET enable_progress_bar = false")
    for name in ("profiles", "samples", "stacks", "frames", "strings"):  # (as the page does)
        connection.register(f"fleet_{name}", dataset.arrow(fleet_dataset, name))
    connection.execute(SQL[0])
    yield connection
    connection.close()


def test_the_top_functions_query(duckdb_views, fleet_files):
    everything = fleet_files["v1"] + fleet_files["v2"]
    expected = function_table(one_machine(everything))
    found = duckdb_views.execute(SQL[1]).fetchall()
    assert found == sorted(expected.rows(), key=lambda r: (-r[1], -r[2], r[0]))[:20]


def test_the_per_deploy_diff_query(duckdb_views, fleet_files):
    expected = diff(one_machine(fleet_files["v1"]), one_machine(fleet_files["v2"]), force=True)
    wanted = {name: (before, after) for name, before, after in zip(
        expected["funcname"].tolist(), expected["base_self_fraction"].tolist(),
        expected["other_self_fraction"].tolist(), strict=True)}
    found = duckdb_views.execute(SQL[2]).fetchall()
    assert len(found) == min(20, len(wanted))
    for name, before, after, delta in found:
        assert (before, after) == pytest.approx(wanted[name], abs=1e-12)
        assert delta == pytest.approx(after - before)
    biggest = max(abs(a - b) for b, a in wanted.values())
    assert abs(found[0][3]) == pytest.approx(biggest)


@pytest.mark.parametrize("line", [line for block in re.findall(r"```sh\n(.*?)```", TEXT, re.S)
                                  for line in block.splitlines()
                                  if line.startswith("tachyon-format ")])
def test_command_lines_parse(line):
    words = shlex.split(line.split("#")[0])
    assert build_parser().parse_args(words[1:]).run is not None


def test_the_page_is_linked():
    assert "docs/fleet.md" in (REPO / "README.md").read_text(encoding="utf-8")

"""bin/pytest-coverage on a run of its own: a green run says nothing about data files, a data file that is not
the run's own is never combined, and one of the run's own that cannot be read is left out and named once, in one line.

The module copies the script into a directory laid out as the repository (the venv, pyproject.toml, the floor
script) and runs it once on a small test file there, so the run under test and any surrounding one share nothing;
each test reads what that one run printed and left.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import coverage_hook
from tests.helpers.support import ROOT

BASH = shutil.which("bash") or "/bin/bash"

# One run of four tests: a subprocess measured as most servers are; a peer and a server the test processes cover
# (tests/helpers/coverage_hook.py) left unmeasured; a process that saved its data in the work tree while the run
# went on, as one left over from an earlier run (or started by another run in the same checkout) does when it
# finally stops; and one of this run's own processes that died while saving, leaving a file coverage cannot read
# beside the others.
INNER = '''
import os, subprocess, sys
from pathlib import Path

def test_a_subprocess_is_measured_too():
    subprocess.run([sys.executable, "-c", "import mcp_kit"], check=True)

def test_a_peer_or_a_server_covered_in_process_starts_without_coverage_and_any_other_process_with_it():
    def measured(code):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return done.stdout.strip(), done.stderr
    probe = "import os, sys; print('coverage' in sys.modules, 'COVERAGE_PROCESS_START' in os.environ)"
    assert measured("'tests.helpers.kit_upstream'; " + probe) == ("False False", "")
    assert measured(probe) == ("True True", "")
    Path("examples").mkdir()
    Path("examples/demo_server.py").write_text(probe)  # a server the test processes cover, as a script
    Path("examples/other.py").write_text(probe)
    for script, started in (("examples/demo_server.py", "False False"), ("examples/other.py", "True True")):
        done = subprocess.run([sys.executable, script], capture_output=True, text=True, check=True)
        assert (done.stdout.strip(), done.stderr) == (started, ""), script

def test_a_process_from_elsewhere_saves_in_the_work_tree():
    Path(".coverage.vm.pid1.leftover").write_text("not a data file")

def test_a_process_of_this_run_dies_while_saving():
    Path(os.environ["COVERAGE_FILE"]).with_name(".coverage.vm.pid2.broken").write_text("not a data file")
'''


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The work tree of the one run, and all it printed."""
    tree = tmp_path_factory.mktemp("coverage-run")
    done = run_coverage(tree, INNER)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "4 passed" in output and "pytest and its subprocesses combined" in output
    return tree, output


def run_coverage(tmp_path: Path, test_file: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "bin").mkdir()
    shutil.copy(ROOT / "bin" / "pytest-coverage", tmp_path / "bin" / "pytest-coverage")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    (tmp_path / "tests" / "helpers").mkdir(parents=True)
    for helper in ("coverage_floor.py", "coverage_hook.py"):
        (tmp_path / "tests" / "helpers" / helper).symlink_to(ROOT / "tests" / "helpers" / helper)
    (tmp_path / "tests" / "test_inner.py").write_text(test_file, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("COVERAGE_", "PYTEST_"))}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([BASH, "bin/pytest-coverage", "tests/test_inner.py", "-p", "no:xdist"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)


def test_a_run_says_nothing_about_the_data_files_it_combined(run: tuple[Path, str]) -> None:
    tree, output = run
    assert "CoverageWarning" not in output and "errored" not in output and "Combined" not in output
    assert (tree / ".coverage").is_file() and (tree / "coverage.json").is_file()  # for `coverage html`


def test_a_data_file_the_run_did_not_write_is_never_combined(run: tuple[Path, str]) -> None:
    tree, output = run
    assert "leftover" not in output
    assert sorted(path.name for path in tree.glob(".coverage*")) == [".coverage", ".coverage.vm.pid1.leftover"]


def test_an_unreadable_data_file_of_the_run_is_named_once(run: tuple[Path, str]) -> None:
    _, output = run
    assert output.count(".coverage.vm.pid2.broken") == 1, output[-3000:]  # one line saying it was left out
    assert "left out .coverage.vm.pid2.broken" in output


@pytest.mark.parametrize(("argv", "left_out"), [
    (["python", "-m", "tests.helpers.kit_upstream"], True),
    (["python", "-X", "importtime", "-u", "-m", "tests.helpers.rogue_upstream", "pages"], True),
    (["python", "-c", "import runpy; runpy.run_module('tests.helpers.kit_upstream', run_name='__main__')"], True),
    (["python", "-m", "servers.stock"], True),
    (["python", "-u", "-m", "servers.filesystem", "/tmp"], True),
    (["python", str(ROOT / "examples" / "demo_server.py"), "--transport", "http"], True),
    (["python", str(ROOT / "tests" / "helpers" / "facade_server.py"), "--oauth-upstream", "oidc"], True),
    (["python", "-m", "mcp_kit", "proxy", "--", "python", "-m", "tests.helpers.kit_upstream"], False),
    (["python", "-m", "mcp_kit", "run", "servers.stock"], False),
    (["python", str(ROOT / "examples" / "hub_server.py"), "-m", "tests.helpers.kit_upstream"], False),
    (["python", "/elsewhere/examples/demo_server.py"], False),
    (["python", "-m", "servers.stock.tools"], False),
    (["python", "-m", "tests.helpers.fault_server"], False),
    (["python", "-c", "import mcp_kit"], False),
    (["python"], False),
])
def test_the_hook_leaves_out_only_a_process_that_itself_runs_a_peer_or_a_server_covered_in_process(
        argv: list[str], left_out: bool) -> None:
    assert coverage_hook.is_left_out(argv, str(ROOT)) is left_out


def test_a_narrowed_run_that_measures_nothing_says_so_and_ends_as_pytest_did(tmp_path: Path) -> None:
    done = run_coverage(tmp_path, "def test_nothing_of_mcp_kit():\n    assert True\n")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "1 passed" in output
    assert "coverage: these tests ran no line of mcp_kit or servers; nothing to report" in output
    assert "No data to report" not in output

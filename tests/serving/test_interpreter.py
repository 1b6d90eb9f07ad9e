"""An interpreter without mcp_kit's dependencies (the system python3, not the venv) is told which one to use."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_kit._serving.interpreter import venv_python
from tests.helpers.support import ROOT


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv with nothing installed: Python as a newcomer's system python3 is."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    missing = subprocess.run([str(python), "-c", "import pydantic"], capture_output=True, timeout=60)
    assert missing.returncode != 0  # the bare interpreter really lacks the dependencies
    yield python


def start(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), *args], capture_output=True, text=True, timeout=60, cwd=ROOT)


def advice(command: str) -> str:
    venv = venv_python(ROOT)
    if venv.exists():
        return f"Use the project's virtual environment instead: {venv} {command}"
    return "Create the project's virtual environment"


@pytest.mark.parametrize("command", ["-m servers.stock --provider sample", "-m servers.weather",
                                     "-m servers.filesystem --root .", "-m mcp_kit list x"])
def test_our_programs_say_which_interpreter_to_use(bare_python: Path, command: str) -> None:
    done = start(bare_python, *command.split())
    assert done.returncode == 1
    assert done.stderr.startswith(f"mcp_kit cannot start: {bare_python} does not have its dependency '")
    assert advice(command) in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_importing_mcp_kit_raises_a_module_not_found_error_that_says_it(bare_python: Path) -> None:
    done = start(bare_python, "-c", "import mcp_kit")
    assert done.returncode == 1
    assert "ModuleNotFoundError: mcp_kit cannot start: " in done.stderr
    assert advice("-c 'import mcp_kit'") in done.stderr
    caught = start(
        bare_python, "-c", "try:\n import mcp_kit\nexcept ImportError as e:\n print(type(e).__name__, e.name)"
    )
    assert caught.returncode == 0 and caught.stdout.split()[0] == "ModuleNotFoundError"  # still catchable as such


def test_the_console_script_points_at_the_venvs_script(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_kit._serving import interpreter as dependencies

    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/mcp-kit", "list", "python -m servers.stock"])
    monkeypatch.setattr(sys, "executable", "/usr/bin/python3")
    monkeypatch.setattr(dependencies, "venv_python", lambda: Path("/repo/.venv/bin/python"))
    monkeypatch.setattr(Path, "exists", lambda self: str(self) == "/repo/.venv/bin/python")
    outcome = dependencies.explain_missing(ModuleNotFoundError("No module named 'anyio'", name="anyio"))
    assert isinstance(outcome, SystemExit)
    assert str(outcome.code) == (
        "mcp_kit cannot start: /usr/bin/python3 does not have its dependency 'anyio'.\n"
        "Use the project's virtual environment instead: /repo/.venv/bin/mcp-kit list 'python -m servers.stock'")

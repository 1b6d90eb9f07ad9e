"""The servers under test: where their interpreter lives, how to launch them, and setting up peer venvs."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger("bench.implementations")

BENCH_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = BENCH_DIR.parent
SERVERS_DIR = BENCH_DIR / "servers"
VENVS_DIR = BENCH_DIR / ".venvs"
PROJECT_PYTHON = REPO_DIR / ".venv" / "bin" / "python"

# name -> pip requirement installed into bench/.venvs/<name>
PEER_REQUIREMENTS = {"sdk": "mcp==2.3.0", "fastmcp": "fastmcp==4.1.6"}
INSTALL_MARKER = ".bench-installed"
STATIC_TEXT = "static resource text for the benchmark"


@dataclass
class Implementation:
    """One server under test."""

    name: str
    label: str
    python: Path
    script: Path
    transports: tuple[str, ...]
    extra_env: dict[str, str] = field(default_factory=dict)
    available: bool = True
    reason: str = ""

    def argv(
        self, transport: str, port: int | None = None, json_response: bool = False
    ) -> list[str]:
        """Command line that starts this server on `transport`."""
        argv = [str(self.python), str(self.script), "--transport", transport]
        if port is not None:
            argv += ["--host", "127.0.0.1", "--port", str(port)]
        if json_response:
            argv.append("--json-response")
        return argv

    def env(self) -> dict[str, str]:
        """Environment for the server process: ours minus Python path overrides, plus its extras."""
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
        }
        env.update(self.extra_env)
        return env


def _base_python() -> str:
    """The interpreter the venvs are created from (the one behind the harness's venv, if any)."""
    return getattr(sys, "_base_executable", None) or sys.executable


def ensure_peer_venv(name: str, requirement: str, timeout_s: float = 900.0) -> Path:
    """Create bench/.venvs/<name> with `requirement` installed unless it is already there; return its python."""
    venv = VENVS_DIR / name
    python = venv / "bin" / "python"
    marker = venv / INSTALL_MARKER
    if (
        python.exists()
        and marker.exists()
        and marker.read_text().strip() == requirement
    ):
        return python
    logger.info("creating %s with %s (one-off, may take a minute)", venv, requirement)
    started = time.monotonic()
    subprocess.run(
        [_base_python(), "-m", "venv", "--clear", str(venv)],
        check=True,
        timeout=timeout_s,
    )
    remaining = max(60.0, timeout_s - (time.monotonic() - started))
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            requirement,
        ],
        check=True,
        timeout=remaining,
    )
    marker.write_text(requirement + "\n")
    return python


def _probe_import(
    python: Path, statement: str, env: dict[str, str], timeout_s: float = 60.0
) -> str:
    """Return '' when `python -c statement` works, else the last line of its error output."""
    try:
        done = subprocess.run(
            [str(python), "-c", statement],
            env=env,
            cwd=str(REPO_DIR),
            check=False,
            capture_output=True,
            timeout=timeout_s,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return ""
    return (
        done.stderr.decode(errors="replace").strip().splitlines()[-1:][0]
        if done.stderr
        else "import failed"
    )


def package_version(python: Path, distribution: str) -> str:
    """Installed version of `distribution` in the interpreter `python` ('' if absent)."""
    code = f"import importlib.metadata as m\ntry: print(m.version({distribution!r}))\nexcept Exception: print('')"
    try:
        done = subprocess.run(
            [str(python), "-c", code],
            check=False,
            capture_output=True,
            timeout=60,
            cwd="/",
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.decode().strip()


def prepare(names: list[str], setup_peers: bool) -> list[Implementation]:
    """Build the list of implementations to run, creating peer venvs as needed and probing imports."""
    result: list[Implementation] = []
    for name in names:
        if name == "mcp_kit":
            impl = Implementation(
                "mcp_kit",
                "mcp_kit",
                PROJECT_PYTHON,
                SERVERS_DIR / "mcp_kit_server.py",
                ("stdio", "http"),
                extra_env={"PYTHONPATH": str(REPO_DIR)},
            )
            probe = "from mcp_kit import MCPServer"
        elif name == "floor":
            impl = Implementation(
                "floor",
                "floor (json loop)",
                PROJECT_PYTHON,
                SERVERS_DIR / "floor_echo.py",
                ("stdio", "http"),
            )
            probe = "import json"
        elif name in PEER_REQUIREMENTS:
            requirement = PEER_REQUIREMENTS[name]
            python = VENVS_DIR / name / "bin" / "python"
            if setup_peers:
                try:
                    python = ensure_peer_venv(name, requirement)
                except (OSError, subprocess.SubprocessError) as exc:
                    logger.error("could not set up %s: %s", name, exc)
            label = {"sdk": "mcp SDK 2.3.0", "fastmcp": "FastMCP 4.1.6"}[name]
            env = (
                {
                    "FASTMCP_CHECK_FOR_UPDATES": "off",
                    "FASTMCP_SHOW_SERVER_BANNER": "false",
                }
                if name == "fastmcp"
                else {}
            )
            impl = Implementation(
                name,
                label,
                python,
                SERVERS_DIR / f"{name}_server.py",
                ("stdio", "http"),
                env,
            )
            probe = (
                "from fastmcp import FastMCP"
                if name == "fastmcp"
                else "from mcp.server.mcpserver import MCPServer"
            )
        else:
            raise ValueError(f"unknown implementation {name!r}")
        if not impl.python.exists():
            impl.available, impl.reason = (
                False,
                f"{impl.python} missing (run without --no-setup)",
            )
        else:
            error = _probe_import(impl.python, probe, impl.env())
            if error:
                impl.available, impl.reason = False, f"`{probe}` failed: {error}"
        result.append(impl)
    return result

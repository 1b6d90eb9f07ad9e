"""The servers under test: where their interpreter lives, how to launch them, and setting up peer venvs.

Every server runs in one of two event-loop variants (`LOOPS`): `uvloop` (uvloop + httptools, what
mcp_kit installs) and `asyncio` (the stdlib loop + uvicorn's h11 parser, what a plain `pip install mcp`
or `fastmcp` gives). The variant is passed as `BENCH_LOOP` and applied by `servers/_bench_loop.py`;
the peers' venvs get the same uvloop and httptools versions as the project's venv, so both variants
are open to every framework. The implementation named `sdk` is the uvloop variant, `sdk@asyncio` the other.
"""

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

# name -> pip requirement installed into bench/.venvs/<name> (plus LOOP_PACKAGES at the project's versions)
PEER_REQUIREMENTS = {"sdk": "mcp==2.3.0", "fastmcp": "fastmcp==4.1.6"}
LOOP_PACKAGES = ("uvloop", "httptools")
INSTALL_MARKER = ".bench-installed"
STATIC_TEXT = "static resource text for the benchmark"
BASE_NAMES = ("mcp_kit", "sdk", "fastmcp", "floor")
LOOPS = ("uvloop", "asyncio")
DEFAULT_LOOP = "uvloop"


def variant_name(base: str, loop: str) -> str:
    """`sdk` for the default (uvloop) variant, `sdk@asyncio` for the other."""
    return base if loop == DEFAULT_LOOP else f"{base}@{loop}"


def split_name(name: str) -> tuple[str, str]:
    """(base, loop) of an implementation name such as `sdk@asyncio`."""
    base, _, loop = name.partition("@")
    return base, loop or DEFAULT_LOOP


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
    loop: str = DEFAULT_LOOP

    @property
    def base(self) -> str:
        """The framework without the loop variant: `sdk` for `sdk@asyncio`."""
        return split_name(self.name)[0]

    def expected_native(self, transport: str) -> dict[str, bool]:
        """Which native modules this server must have loaded on `transport` (checked via /proc/PID/maps)."""
        if self.base == "floor":
            return {"uvloop": transport == "http" and self.loop == "uvloop", "httptools": False}
        return {"uvloop": self.loop == "uvloop", "httptools": transport == "http" and self.loop == "uvloop"}

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

    def env(self, **extra: str) -> dict[str, str]:
        """Environment for the server process: ours minus Python path and bench overrides, plus its extras."""
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "BENCH_EXTRA_TOOLS", "BENCH_FEATURES")
        }
        env.update(self.extra_env)
        env["BENCH_LOOP"] = self.loop
        env.update(extra)
        return env


def _base_python() -> str:
    """The interpreter the venvs are created from (the one behind the harness's venv, if any)."""
    return getattr(sys, "_base_executable", None) or sys.executable


def peer_requirements(name: str) -> list[str]:
    """What bench/.venvs/<name> gets: the framework, plus uvloop and httptools at the project venv's versions."""
    requirements = [PEER_REQUIREMENTS[name]]
    for package in LOOP_PACKAGES:
        version = package_version(PROJECT_PYTHON, package) if PROJECT_PYTHON.exists() else ""
        requirements.append(f"{package}=={version}" if version else package)
    return requirements


def ensure_peer_venv(name: str, requirements: list[str], timeout_s: float = 900.0) -> Path:
    """Create bench/.venvs/<name> with `requirements` installed unless they are already there; return its python."""
    requirement = " ".join(requirements)
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
            *requirements,
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


def _base_implementation(base: str, setup_peers: bool) -> tuple[Implementation, str]:
    """The default-loop implementation of framework `base` and the import that proves it works."""
    if base == "mcp_kit":
        impl = Implementation(
            "mcp_kit",
            "mcp_kit",
            PROJECT_PYTHON,
            SERVERS_DIR / "mcp_kit_server.py",
            ("stdio", "http"),
            extra_env={"PYTHONPATH": str(REPO_DIR)},
        )
        return impl, "from mcp_kit import MCPServer"
    if base == "floor":
        impl = Implementation(
            "floor",
            "floor (json loop)",
            PROJECT_PYTHON,
            SERVERS_DIR / "floor_echo.py",
            ("stdio", "http"),
        )
        return impl, "import json"
    if base not in PEER_REQUIREMENTS:
        raise ValueError(f"unknown implementation {base!r}")
    python = VENVS_DIR / base / "bin" / "python"
    if setup_peers:
        try:
            python = ensure_peer_venv(base, peer_requirements(base))
        except (OSError, subprocess.SubprocessError) as exc:
            logger.error("could not set up %s: %s", base, exc)
    label = {"sdk": "mcp SDK 2.3.0", "fastmcp": "FastMCP 4.1.6"}[base]
    env = (
        {"FASTMCP_CHECK_FOR_UPDATES": "off", "FASTMCP_SHOW_SERVER_BANNER": "false"}
        if base == "fastmcp"
        else {}
    )
    impl = Implementation(base, label, python, SERVERS_DIR / f"{base}_server.py", ("stdio", "http"), env)
    probe = "from fastmcp import FastMCP" if base == "fastmcp" else "from mcp.server.mcpserver import MCPServer"
    return impl, probe


def prepare(names: list[str], setup_peers: bool, loops: tuple[str, ...] = (DEFAULT_LOOP,)) -> list[Implementation]:
    """The implementations to run: each framework in `names` once per event loop in `loops`.

    Creates peer venvs as needed and probes that each interpreter imports its framework (and, for the
    uvloop variant, uvloop and httptools). `names` may also hold explicit variants (`sdk@asyncio`).
    The stdio floor has no event loop, so `floor@asyncio` serves HTTP only.
    """
    wanted: list[tuple[str, str]] = []
    for name in names:
        base, loop = split_name(name)
        for variant in ([loop] if "@" in name else list(loops)):
            if variant not in LOOPS:
                raise ValueError(f"unknown event loop {variant!r}; use one of {', '.join(LOOPS)}")
            if (base, variant) not in wanted:
                wanted.append((base, variant))
    bases: dict[str, tuple[Implementation, str]] = {}
    result: list[Implementation] = []
    for base, loop in wanted:
        if base not in bases:
            bases[base] = _base_implementation(base, setup_peers)
        template, probe = bases[base]
        impl = Implementation(
            variant_name(base, loop),
            template.label if loop == DEFAULT_LOOP else f"{template.label} ({loop})",
            template.python,
            template.script,
            ("http",) if base == "floor" and loop != DEFAULT_LOOP else template.transports,
            dict(template.extra_env),
            loop=loop,
        )
        if loop == "uvloop" and base != "floor":
            probe += "; import uvloop, httptools"
        if not impl.python.exists():
            impl.available, impl.reason = False, f"{impl.python} missing (run without --no-setup)"
        else:
            error = _probe_import(impl.python, probe, impl.env())
            if error:
                impl.available, impl.reason = False, f"`{probe}` failed: {error}"
        result.append(impl)
    return result

"""What to say when the running interpreter lacks mcp_kit's dependencies.

The usual cause is starting a server or `mcp-kit` with the system `python3` instead of the project's
virtual environment. `mcp_kit/__init__.py` imports this module only on that failure path, so a normal
start pays nothing. Programs of this project (`python -m servers.NAME`, `python -m mcp_kit`, the
`mcp-kit` script) end with the message alone; any other importer gets a ModuleNotFoundError carrying it.

Imports only the standard library.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
OUR_PACKAGES = ("mcp_kit", "servers")


def venv_python(checkout: Path = CHECKOUT, platform: str = sys.platform) -> Path:
    """The checkout's `.venv` interpreter (`.venv\\Scripts\\python.exe` on Windows)."""
    return checkout / ".venv" / ("Scripts/python.exe" if platform == "win32" else "bin/python")


def _running_our_program() -> bool:
    """Whether the import happens for one of our own programs, where a traceback helps nobody."""
    argv0 = sys.argv[0] if sys.argv else ""
    if argv0 == "-m":  # `python -m mcp_kit`: the package is being imported to locate the module
        return True
    if Path(argv0).name.startswith("mcp-kit"):  # the console script (mcp-kit, mcp-kit.exe)
        return True
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return spec is not None and spec.name.partition(".")[0] in OUR_PACKAGES


def _suggestion(python: Path) -> str:
    """The command the user ran, started by `python` instead."""
    original = list(getattr(sys, "orig_argv", sys.argv))
    if sys.argv and Path(sys.argv[0]).name.startswith("mcp-kit"):
        return shlex.join([str(python.with_name("mcp-kit")), *sys.argv[1:]])
    return shlex.join([str(python), *original[1:]])


def missing_dependency_message(missing: str) -> str:
    """Which interpreter is at fault, and which one to use."""
    current = sys.executable or "this Python"
    lines = [f"mcp_kit cannot start: {current} does not have its dependency '{missing}'."]
    venv = venv_python()
    if venv.exists() and venv.absolute() != Path(current).absolute():
        lines.append(f"Use the project's virtual environment instead: {_suggestion(venv)}")
    else:
        lines.append(f"Create the project's virtual environment ({CHECKOUT}): python3 -m venv .venv && "
                     f".venv/bin/pip install -e .  (bin/demo and bin/test do this), then run with .venv/bin/python")
    return "\n".join(lines)


def explain_missing(error: ModuleNotFoundError) -> BaseException:
    """The exception to raise instead of `error`: SystemExit with the message for our own programs,
    else a ModuleNotFoundError whose message says which interpreter to use."""
    missing = (error.name or "?").partition(".")[0]
    message = missing_dependency_message(missing)
    if _running_our_program():
        return SystemExit(message)
    return ModuleNotFoundError(message, name=error.name)

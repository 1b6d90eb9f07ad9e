"""Start-up hook of bin/pytest-coverage: each Python process it starts measures coverage, but a few kinds.

bin/pytest-coverage copies this file into the venv's site-packages as `mcp_kit_coverage_hook.py`, and a
`.pth` file that sorts before coverage's own (`a1_coverage.pth`) calls its `start()` as the interpreter
starts. In a process started with COVERAGE_PROCESS_START set it then either starts coverage, or, in a
process left out, removes the variable so that coverage's own hook (and the process's children) start nothing.

Two kinds are left out, as what the interpreter itself runs says (`-m MODULE`, `-c` code naming a peer's
module, or a script path); a process that starts one (`mcp-kit proxy -- python -m tests.helpers.kit_upstream`)
is measured:
- a peer, the far end of a test: an upstream a proxy or a client test talks to (tests/helpers/*_upstream,
  the SDK's probe server). The code under test there is the proxy or the client; no assertion is about the
  lines a peer runs.
- a server whose code the test processes cover themselves: the three reference servers (`python -m servers.X`),
  the demo server and the OAuth facade's test server, started as processes by the tests of stdio, HTTP, the SDK
  clients and the facade across processes. Measured, their ~120 processes added 0.1 point (25 lines: entry
  points and a few error branches) and cost about 70 s of CPU of a run.
Measuring a process costs 0.1 s to start coverage, and its tracing roughly doubles what the process does.

Standard library only: it runs before anything else is importable.
"""

from __future__ import annotations

import os
import sys

PEERS = (
    "tests.helpers.kit_upstream",
    "tests.helpers.kit_tasks_upstream",
    "tests.helpers.hostile_upstream",
    "tests.helpers.rogue_upstream",
    "tests.helpers.sdk_upstream",
    "tests.helpers.sdk_probe_server",
)
COVERED_IN_PROCESS_MODULES = ("servers.stock", "servers.weather", "servers.filesystem")
COVERED_IN_PROCESS_SCRIPTS = ("examples/demo_server.py", "tests/helpers/facade_server.py")  # from the checkout


def what_runs(argv: list[str]) -> tuple[str, str]:
    """What the interpreter whose `sys.orig_argv` this is runs: ("-m", module), ("-c", code), ("script", path)
    or ("", "") for an interactive one."""
    options = iter(argv[1:])
    for arg in options:
        if arg in ("-m", "-c"):
            return arg, next(options, "")
        if arg in ("-X", "-W"):  # an option with its value in the next argument
            next(options, None)
        elif not arg.startswith("-"):
            return "script", arg
    return "", ""


def is_peer(argv: list[str]) -> bool:
    """Whether the interpreter runs a peer (`-m PEER`, or `-c` code naming one)."""
    kind, what = what_runs(argv)
    if kind == "-m":
        return what in PEERS
    return kind == "-c" and any(f"'{peer}'" in what or f'"{peer}"' in what for peer in PEERS)


def is_left_out(argv: list[str], checkout: str) -> bool:
    """Whether the interpreter runs a peer or a server the test processes cover (a script path is taken
    relative to the current directory and compared within `checkout`)."""
    if is_peer(argv):
        return True
    kind, what = what_runs(argv)
    if kind == "-m":
        return what in COVERED_IN_PROCESS_MODULES
    if kind == "script":
        try:
            script = os.path.relpath(os.path.abspath(what), checkout).replace(os.sep, "/")
        except ValueError:  # on another drive than the checkout
            return False
        return script in COVERED_IN_PROCESS_SCRIPTS
    return False


def start() -> None:
    settings = os.environ.get("COVERAGE_PROCESS_START")
    if not settings:
        return
    if is_left_out(sys.orig_argv, os.path.dirname(os.path.abspath(settings))):
        del os.environ["COVERAGE_PROCESS_START"]  # coverage's own hook, and the process's children, start nothing
        return
    try:
        import coverage
    except ImportError:  # an interpreter without coverage starts as usual
        return
    coverage.process_startup()

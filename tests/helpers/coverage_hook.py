"""Start-up hook of bin/pytest-coverage: each Python process it starts measures coverage, but the peers.

bin/pytest-coverage copies this file into the venv's site-packages as `mcp_kit_coverage_hook.py`, and a
`.pth` file that sorts before coverage's own (`a1_coverage.pth`) calls its `start()` as the interpreter
starts. In a
process started with COVERAGE_PROCESS_START set it then either starts coverage, or, in a peer, removes the
variable so that coverage's own hook starts nothing.

A peer is the far end of a test: an upstream a proxy or a client test talks to (tests/helpers/*_upstream,
the SDK's probe server). The code under test there is the proxy or the client; lines a peer runs are
exercised by no assertion, and measuring a peer costs 0.1 to 0.3 s of CPU per process: the
coverage import and the tracing of its start (the peers are about a third of the processes a run starts).
A process that starts a peer (`mcp-kit proxy -- python -m tests.helpers.kit_upstream`) is measured: only
the module or code the interpreter itself runs counts.

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


def is_peer(argv: list[str]) -> bool:
    """Whether the interpreter whose `sys.orig_argv` this is runs a peer (`-m PEER`, or `-c` code naming one)."""
    options = iter(argv[1:])
    for arg in options:
        if arg in ("-m", "-c"):
            what = next(options, "")
            return what in PEERS if arg == "-m" else any(f"'{peer}'" in what or f'"{peer}"' in what for peer in PEERS)
        if arg in ("-X", "-W"):  # an option with its value in the next argument
            next(options, None)
        elif not arg.startswith("-"):  # a script: what runs is a file, never a peer module
            return False
    return False


def start() -> None:
    if not os.environ.get("COVERAGE_PROCESS_START"):
        return
    if is_peer(sys.orig_argv):
        del os.environ["COVERAGE_PROCESS_START"]  # coverage's own hook, and the peer's children, start nothing
        return
    try:
        import coverage
    except ImportError:  # an interpreter without coverage starts as usual
        return
    coverage.process_startup()

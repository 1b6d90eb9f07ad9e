"""What a process imports before its first message: only what the server it runs uses.

Every stdio server a client starts pays for its imports before it can answer `initialize`, so the optional
parts load when first used: PyYAML with the first SKILL.md parsed, httpx with a live data provider or a
command that connects to a server. Each case runs in a fresh interpreter and names what it must not import.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers.support import ROOT

CASES = {
    "a server with a tool, a resource and a prompt": (
        "from mcp_kit import MCPServer\n"
        "app = MCPServer('plain')\n"
        "@app.tool()\ndef echo(text: str) -> str:\n    return text\n"
        "@app.resource('note://one')\ndef one() -> str:\n    return 'one'\n"
        "@app.prompt()\ndef ask(topic: str) -> str:\n    return topic\n"
        "from mcp_kit._serving.serve import add_run_arguments\n", ("yaml", "httpx")),  # what app.run() loads
    "the stock server's sample provider": (
        "from servers.stock.providers import make_provider\nmake_provider('sample')\n", ("httpx",)),
    "the weather server's sample provider": (
        "from servers.weather.providers import make_provider\nmake_provider('sample')\n", ("httpx",)),
    "the mcp-kit command's parser": (
        "from mcp_kit._cli import main\nmain.build_parser()\n", ("httpx", "jwt")),
}


@pytest.mark.parametrize("case", CASES)
def test_what_is_not_used_is_not_imported(case: str) -> None:
    code, absent = CASES[case]
    probe = code + f"import sys\nprint(sorted(name for name in {absent!r} if name in sys.modules))\n"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"{case} imported {done.stdout.strip()}"


def test_the_live_providers_still_bring_httpx() -> None:
    """The other side of the cases above: the probe sees an import when there is one."""
    probe = ("from servers.stock.providers import LiveProvider\nfrom servers.weather.providers import make_provider\n"
             "make_provider('live')\nimport sys\nprint('httpx' in sys.modules, LiveProvider.__name__)\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "LiveProvider"], done.stderr

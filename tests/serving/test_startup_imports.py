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

# A tool that asks the client for a name, a word and the roots. In the 2026-07-28 era its first call ends
# in an input-required result: the protocol models (`mcp_types`, ~0.2 s to import, blocking the event loop)
# load only once answers come back, so the round is answered in milliseconds.
ASKING_TOOL = (
    "import anyio\nfrom mcp_kit import Context, MCPServer\nfrom mcp_kit.testing import connect\n"
    "META = {'io.modelcontextprotocol/protocolVersion': '2026-07-28',\n"
    "        'io.modelcontextprotocol/clientCapabilities': {'elicitation': {}, 'sampling': {}, 'roots': {}}}\n"
    "app = MCPServer('asks')\n"
    "@app.tool\nasync def ask(ctx: Context) -> str:\n"
    "    name = await ctx.elicit('Name?', {'type': 'object', 'properties': {'name': {'type': 'string'}}}, key='n')\n"
    "    word = await ctx.sample('A word?', key='w')\n"
    "    roots = await ctx.list_roots(key='r')\n"
    "    return f'{name.content} {word.content.text} {len(roots)}'\n")

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
    "a 2026-07-28 call whose tool asks the client, first round": (ASKING_TOOL + (
        "async def first_round():\n"
        "    async with connect(app, initialize=False) as client:\n"
        "        result = await client.request('tools/call', {'_meta': META, 'name': 'ask', 'arguments': {}})\n"
        "    assert result['resultType'] == 'input_required', result\n"
        "anyio.run(first_round)\n"), ("mcp_types",)),
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


def test_answered_questions_bring_the_protocol_models() -> None:
    """The other side of the first-round case: with the answers, the tool's results are the protocol models."""
    answers = ("{'n': {'action': 'accept', 'content': {'name': 'Ada'}}, "
               "'w': {'role': 'assistant', 'content': {'type': 'text', 'text': 'hi'}, 'model': 'm'}, "
               "'r': {'roots': [{'uri': 'file:///tmp'}]}}")
    probe = ASKING_TOOL + (
        "async def answered():\n"
        "    async with connect(app, initialize=False) as client:\n"
        f"        params = {{'_meta': META, 'name': 'ask', 'arguments': {{}}, 'inputResponses': {answers}}}\n"
        "        result = await client.request('tools/call', params)\n"
        "    print(result['content'][0]['text'])\n"
        "anyio.run(answered)\nimport sys\nprint('mcp_types' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == ["{'name': 'Ada'} hi 1", "True"], done.stderr


def test_the_live_providers_still_bring_httpx() -> None:
    """The other side of the cases above: the probe sees an import when there is one."""
    probe = ("from servers.stock.providers import LiveProvider\nfrom servers.weather.providers import make_provider\n"
             "make_provider('live')\nimport sys\nprint('httpx' in sys.modules, LiveProvider.__name__)\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "LiveProvider"], done.stderr

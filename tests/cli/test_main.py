"""The `mcp-kit` command: run, list, call, read, prompt (stdio, Streamable HTTP, legacy SSE), config.

Most tests run the command in this process (`cli`); those that test the process itself (its logging set-up, the
console script, an environment of its own) start it as a user would (`mcp_kit`).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from mcp_kit._cli import client_config
from mcp_kit._cli.arguments import collect, json_after_flag, parse_pairs
from mcp_kit._cli.exit_codes import CommandError
from mcp_kit._cli.loader import load_server, split_spec
from mcp_kit._cli.main import main
from mcp_kit._cli.progress import render_bar
from mcp_kit._cli.render import first_line
from tests.helpers.client_servers import CHATTY, DIES_AT_INITIALIZE, JUNK_THEN_EXIT, SDK_SERVER, STOCK, script
from tests.helpers.support import ROOT, coverage_env, http_server, refused_port

MCP_KIT = [sys.executable, "-m", "mcp_kit"]


def mcp_kit(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the command line as a user would; returns the finished process (stdout, stderr, returncode)."""
    return subprocess.run([*MCP_KIT, *args], capture_output=True, text=True, timeout=90, cwd=ROOT)


class Cli(Protocol):
    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]: ...


@pytest.fixture
def cli(capfd: pytest.CaptureFixture[str]) -> Cli:
    """The command line run in this process: what `main` returns, and what reached file descriptors 1 and 2 (its own
    output and that of every server it starts), as a finished process would give them. A process of its own costs
    a second interpreter per call; `mcp_kit` above runs one where the process itself is what is tested."""
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        capfd.readouterr()
        code = main(list(args))
        out, err = capfd.readouterr()
        return subprocess.CompletedProcess(["mcp-kit", *args], code, out, err)
    return run


@pytest.fixture(scope="module")
def weather_url() -> Iterator[str]:
    with http_server(["-m", "servers.weather", "--provider", "sample"]) as base:
        yield base


# ---------------------------------------------------------------------------- stdio targets


def test_list_stock_over_stdio() -> None:
    done = mcp_kit("list", STOCK)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("stock 1.0.0 - Stock quotes and fundamentals (sample data)")
    assert "Tools (6)" in done.stdout
    assert "get_price_history(ticker, [period], [start], [end], [interval])" in done.stdout
    assert "stock://quote/{ticker}" in done.stdout and "compare-valuation(tickers)" in done.stdout


def test_list_json(cli: Cli) -> None:
    done = cli("list", STOCK, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["server"]["serverInfo"]["name"] == "stock"
    assert {t["name"] for t in data["tools"]} >= {"get_stock_price", "compare_valuation"}
    assert data["resourceTemplates"][0]["uriTemplate"] == "stock://quote/{ticker}"


def test_call_with_pairs_parses_json_values(cli: Cli) -> None:
    done = cli("call", STOCK, "compare_valuation", 'tickers=["AAPL", "MSFT"]')
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)  # the stock server's text content is its JSON result
    assert [row["ticker"] for row in result["results"]] == ["AAPL", "MSFT"]


def test_call_with_json_object_prints_json(cli: Cli) -> None:
    done = cli("call", STOCK, "get_stock_price", "--json", '{"ticker": "msft"}')
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["isError"] is False and result["structuredContent"]["ticker"] == "MSFT"


def test_tool_error_exits_1_with_the_message(cli: Cli) -> None:
    done = cli("call", STOCK, "get_stock_price", "ticker=AAPLE")
    assert done.returncode == 1
    assert "error: No ticker 'AAPLE'. Did you mean AAPL (Apple Inc.)?" in done.stderr
    as_json = cli("call", STOCK, "get_stock_price", "ticker=AAPLE", "--json")
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["isError"] is True


def test_protocol_error_exits_3(cli: Cli) -> None:
    done = cli("call", STOCK, "no_such_tool")
    assert done.returncode == 3
    assert "Unknown tool 'no_such_tool'" in done.stderr and "JSON-RPC error -32602" in done.stderr


def test_read_resource(cli: Cli) -> None:
    done = cli("read", STOCK, "stock://quote/AAPL")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ticker"] == "AAPL"
    missing = cli("read", STOCK, "stock://quote/NOPEX")
    assert missing.returncode == 3 and "NOPEX" in missing.stderr


def test_prompt_with_arguments(cli: Cli) -> None:
    done = cli("prompt", STOCK, "analyze-stock", "ticker=NVDA")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# ")
    assert "[user]" in done.stdout and "Give a concise analysis of NVDA" in done.stdout


def test_bad_pair_is_a_usage_error_before_any_server_starts(cli: Cli) -> None:
    done = cli("call", "no-such-command-xyz", "tool", "novalue")
    assert done.returncode == 2
    assert "expected key=value, got 'novalue'" in done.stderr


def test_progress_bar_and_log_messages_go_to_stderr(cli: Cli, tmp_path: Path) -> None:
    done = cli("call", script(tmp_path, "sdk_server.py", SDK_SERVER), "count", "n=2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "counted to 2"
    assert "[###############...............]  50% step 1" in done.stderr
    assert "100% step 2" in done.stderr
    assert "[info] counted" in done.stderr


# ---------------------------------------------------------------------------- a server that is not ours


def test_list_call_read_prompt_against_the_official_sdk_server(cli: Cli, tmp_path: Path) -> None:
    server = script(tmp_path, "sdk_server.py", SDK_SERVER)
    listed = cli("list", server)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("sdk-greeter 9.9")
    assert "greet(name)\n      Say hello to someone." in listed.stdout
    assert "note://hello" in listed.stdout and "ask(topic)" in listed.stdout
    called = cli("call", server, "greet", "name=Ada")
    assert (called.returncode, called.stdout.strip()) == (0, "Hello, Ada!")
    read = cli("read", server, "note://hello")
    assert read.stdout.strip() == "hello from the SDK"
    prompt = cli("prompt", server, "ask", "topic=owls")
    assert "Tell me about owls" in prompt.stdout


# ---------------------------------------------------------------------------- HTTP targets


def test_list_call_read_prompt_over_streamable_http(cli: Cli, weather_url: str) -> None:
    url = f"{weather_url}/mcp"
    listed = cli("list", url)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("weather 1.0.0") and "get_weather(city, [unit])" in listed.stdout
    called = cli("call", url, "get_weather", "city=Tokyo", "--json")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["structuredContent"]["location"]["name"] == "Tokyo"
    read = cli("read", url, "weather://current/Paris")
    assert read.returncode == 0 and json.loads(read.stdout)["location"]["name"] == "Paris"
    prompt = cli(
        "prompt", url, "plan-vacation", "--json", "--args", '{"destination": "Lisbon", "duration": "5 days"}'
    )
    assert prompt.returncode == 0, prompt.stderr
    assert "vacation in Lisbon for 5 days" in json.loads(prompt.stdout)["messages"][0]["content"]["text"]
    incomplete = cli("prompt", url, "plan-vacation", "destination=Lisbon")  # the server answers -32602: exit 3
    assert incomplete.returncode == 3, incomplete.stderr
    assert "missing required argument(s): duration (JSON-RPC error -32602)" in incomplete.stderr
    failed = cli("call", url, "get_weather", "city=Nowhereville")
    assert failed.returncode == 1 and "No place 'Nowhereville'" in failed.stderr


def test_list_and_call_over_legacy_sse(cli: Cli, weather_url: str) -> None:
    url = f"{weather_url}/sse"
    listed = cli("list", url)
    assert listed.returncode == 0, listed.stderr
    assert "search_location" in listed.stdout
    called = cli("call", url, "get_weather", "city=Oslo", "unit=fahrenheit", "--json")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["structuredContent"]["units"]["temperature"] == "°F"


def test_unreachable_url_exits_4(cli: Cli) -> None:
    with refused_port() as port:
        done = cli("list", f"http://127.0.0.1:{port}/mcp", "--timeout", "5")
    assert done.returncode == 4 and "cannot reach the server" in done.stderr


def test_auth_token_is_sent(cli: Cli, tmp_path: Path) -> None:
    with http_server(["-m", "servers.weather", "--provider", "sample", "--auth-token", "s3cret"]) as base:
        refused = cli("list", f"{base}/mcp")
        assert refused.returncode == 4 and "HTTP 401" in refused.stderr
        allowed = cli("list", f"{base}/mcp", "--auth-token", "s3cret")
        assert allowed.returncode == 0, allowed.stderr


# ---------------------------------------------------------------------------- the traps


def test_server_printing_to_stdout_is_named(tmp_path: Path) -> None:
    tolerated = mcp_kit("list", script(tmp_path, "chatty.py", CHATTY))
    assert tolerated.returncode == 0
    assert "non-JSON text to stdout" in tolerated.stderr and "Starting my server..." in tolerated.stderr
    fatal = mcp_kit("list", script(tmp_path, "junk.py", JUNK_THEN_EXIT))
    assert fatal.returncode == 4
    assert "printed non-JSON text to stdout" in fatal.stderr and "Server ready on stdio!" in fatal.stderr


def test_missing_command_exits_4(cli: Cli) -> None:
    done = cli("list", "definitely-not-installed-mcp-server --stdio")
    assert done.returncode == 4
    assert "command not found: 'definitely-not-installed-mcp-server'" in done.stderr


def test_server_exiting_during_initialize_shows_stderr_tail(cli: Cli, tmp_path: Path) -> None:
    done = cli("list", script(tmp_path, "dies.py", DIES_AT_INITIALIZE))
    assert done.returncode == 4
    assert "exited with status 3" in done.stderr
    assert "fatal: FOO_API_KEY is not set" in done.stderr


# ---------------------------------------------------------------------------- run


APP_FILE = '''
from mcp_kit import MCPServer

def build_server() -> MCPServer:
    app = MCPServer("factory-made", version="2.0")

    @app.tool
    def double(x: int) -> int:
        """Double a number."""
        return 2 * x

    return app
'''


def test_run_a_file_with_a_factory_over_stdio(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "myserver.py").write_text(APP_FILE, encoding="utf-8")
    target = shlex.join([*MCP_KIT, "run", str(tmp_path / "myserver.py")])
    done = cli("call", target, "double", "x=21", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"] == [{"type": "text", "text": "42"}]


def test_run_a_module_attribute_over_http(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "myserver.py").write_text(APP_FILE + "\nserver_app = build_server()\n", encoding="utf-8")
    with http_server(["-m", "mcp_kit", "run", "myserver:server_app"], cwd=tmp_path,
                     env={"PYTHONPATH": str(ROOT)}) as base:
        done = cli("list", f"{base}/mcp", "--timeout", "5")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("factory-made 2.0")


def test_run_explains_what_it_looked_for(cli: Cli) -> None:
    done = cli("run", "servers.stock")
    assert done.returncode == 2
    assert "no MCPServer found in servers.stock" in done.stderr
    assert "python -m servers.stock --help" in done.stderr
    missing = cli("run", "no_such_module_xyz")
    assert missing.returncode == 2 and "no module named 'no_such_module_xyz'" in missing.stderr


def test_load_server_forms(tmp_path: Path) -> None:
    path = tmp_path / "two.py"
    path.write_text("from mcp_kit import MCPServer\nalpha = MCPServer('alpha')\nbeta = MCPServer('beta')\n"
                    "def needs(provider): return MCPServer('x')\n", encoding="utf-8")
    assert load_server(f"{path}:beta").name == "beta"
    with pytest.raises(CommandError, match="no MCPServer found"):
        load_server(str(path))
    with pytest.raises(CommandError, match=r"needs arguments \(provider\)"):
        load_server(f"{path}:needs")
    with pytest.raises(CommandError, match="has no attribute 'gamma'"):
        load_server(f"{path}:gamma")


def test_split_spec() -> None:
    assert split_spec("pkg.mod:app") == ("pkg.mod", "app")
    assert split_spec("./server.py") == ("./server.py", None)
    assert split_spec("C:\\work\\server.py") == ("C:\\work\\server.py", None)
    assert split_spec("C:\\work\\server.py:app") == ("C:\\work\\server.py", "app")


# ---------------------------------------------------------------------------- small pieces


def test_argument_parsing() -> None:
    assert parse_pairs(["n=3", "flag=true", "name=Ada", "list=[1,2]", "empty=", "q=\"3\""]) == {
        "n": 3, "flag": True, "name": "Ada", "list": [1, 2], "empty": "", "q": "3"}
    assert parse_pairs(["n=3"], as_json=False) == {"n": "3"}
    assert collect(["b=2"], '{"a": 1, "b": 1}') == {"a": 1, "b": 2}
    with pytest.raises(CommandError, match="JSON object"):
        collect([], "[1]")
    assert json_after_flag(["call", "T", "tool", "--json", '{"a":1}']) == [
        "call",
        "T",
        "tool",
        "--args",
        '{"a":1}',
        "--json",
    ]
    assert json_after_flag(["list", "T", "--json"]) == ["list", "T", "--json"]


def test_progress_bar_and_descriptions() -> None:
    assert render_bar(1, 4, "loading") == "[########......................]  25% loading"
    assert render_bar(3, None, None) == "progress 3"
    assert first_line("Get a quote. More text\nhere.\n\nSecond paragraph.") == "Get a quote."
    assert first_line("x" * 150).endswith("…") and len(first_line("x" * 150)) == 100


# ---------------------------------------------------------------------------- config


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home: nothing here may touch the real one."""
    fake = tmp_path / "home"
    fake.mkdir()
    monkeypatch.setenv("HOME", str(fake))
    monkeypatch.setenv("APPDATA", str(fake / "AppData"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return fake


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_config_prints_entries_without_writing(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "claude", "stock", "weather"]) == 0
    out, err = capsys.readouterr()
    servers = json.loads(out)["mcpServers"]
    assert list(servers) == ["stock", "weather"]
    stock = servers["stock"]
    assert Path(stock["command"]).exists() and os.path.isabs(stock["command"])
    assert stock["args"] == ["-m", "servers.stock"]
    assert stock["cwd"] == str(ROOT) and stock["env"] == {"PYTHONPATH": str(ROOT)}
    assert "--write" in err
    assert not any(home.rglob("*.json"))


def test_config_write_merges_keeps_others_and_backs_up(home: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = client_config.claude_config_path()
    path.parent.mkdir(parents=True)
    original = {"mcpServers": {"other": {"command": "node", "args": ["x.js"]},
                               "stock": {"command": "old"}}, "globalShortcut": "Ctrl+Space"}
    path.write_text(json.dumps(original), encoding="utf-8")
    root = tmp_path / "project"
    root.mkdir()
    assert main(["config", "claude", "--write", "--root", str(root)]) == 0
    written = read_json(path)
    assert written["globalShortcut"] == "Ctrl+Space"
    assert written["mcpServers"]["other"] == {"command": "node", "args": ["x.js"]}
    assert set(written["mcpServers"]) == {"other", "stock", "weather", "filesystem"}
    assert written["mcpServers"]["stock"]["command"] != "old"
    assert written["mcpServers"]["filesystem"]["args"] == ["-m", "servers.filesystem", "--root", str(root.resolve())]
    backups = list(path.parent.glob("claude_desktop_config.json.bak-*"))
    assert len(backups) == 1 and read_json(backups[0]) == original
    assert str(backups[0]) in capsys.readouterr().out


def test_config_refuses_invalid_json(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = client_config.cursor_config_path()
    path.parent.mkdir(parents=True)
    path.write_text('{"mcpServers": {', encoding="utf-8")
    assert main(["config", "cursor", "--write"]) == 1
    assert "is not valid JSON" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == '{"mcpServers": {'
    assert not list(path.parent.glob("*.bak-*"))


def test_config_refuses_a_file_of_the_wrong_shape(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "odd.json"
    path.write_text('{"mcpServers": []}', encoding="utf-8")
    assert main(["config", "claude", "--write", "--config-path", str(path)]) == 1
    assert "does not look like an MCP client config" in capsys.readouterr().err


def test_config_cursor_project_and_config_path(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    assert main(["config", "cursor", "weather", "--write", "--project", str(project)]) == 0
    assert list(read_json(project / ".cursor" / "mcp.json")["mcpServers"]) == ["weather"]
    custom = tmp_path / "custom" / "conf.json"
    assert main(["config", "claude", "stock", "--write", "--config-path", str(custom)]) == 0
    assert list(read_json(custom)["mcpServers"]) == ["stock"]
    assert not list(home.rglob("*.json"))


def test_config_usage_errors(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "claude", "stocks"]) == 2
    assert "unknown server stocks" in capsys.readouterr().err
    assert main(["config", "claude", "--project", str(tmp_path)]) == 2


def test_written_entry_starts_a_working_server(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "claude.json"
    assert main(["config", "claude", "stock", "--provider", "sample", "--write", "--config-path", str(path)]) == 0
    entry = read_json(path)["mcpServers"]["stock"]
    assert entry["args"] == ["-m", "servers.stock", "--provider", "sample"]
    # Started as Claude Desktop would: its own working directory, and nothing in the environment but the entry's
    # `env` (no PATH, no HOME, no virtualenv). The CLI that launches it runs in that environment and passes it on.
    command = shlex.join([entry["command"], *entry["args"]])
    done = subprocess.run([*MCP_KIT, "list", command], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={**entry["env"], **coverage_env()})
    assert done.returncode == 0, done.stderr
    assert "get_stock_price" in done.stdout


def test_console_script_is_installed() -> None:
    script_path = Path(sys.executable).parent / "mcp-kit"
    assert script_path.exists(), "run `pip install -e .` to install the mcp-kit console script"
    done = subprocess.run([str(script_path), "--version"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout.startswith("mcp-kit ")

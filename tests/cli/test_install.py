"""`mcp-kit install CLIENT TARGET`: each client's file and format (checked against the documented schemas and
example configs in tests/fixtures/client_configs), every kind of target, merge, backup, mode and dry run; and each
written entry launched exactly as written, from `/` with a bare environment, answering the official SDK client."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client, types

from mcp_kit._cli.client_paths import System
from mcp_kit._cli.clients import CLIENTS, client_named
from mcp_kit._cli.install import Interpreter, Launch, Remote, client_entry, resolve_target
from mcp_kit._cli.main import main
from tests.helpers.support import ROOT, coverage_env

FIXTURES = ROOT / "tests" / "fixtures" / "client_configs"
SCHEMAS: dict[str, Any] = json.loads((FIXTURES / "schemas.json").read_text(encoding="utf-8"))
WINDOWS = System("win32", {"USERPROFILE": r"C:\Users\Ada", "APPDATA": r"C:\Users\Ada\AppData\Roaming"},
                 r"C:\Users\Ada\proj\.venv\Scripts\python.exe", r"C:\Users\Ada\proj\.venv", r"C:\Python311")
MACOS = System("darwin", {"HOME": "/Users/ada"}, "/Users/ada/proj/.venv/bin/python3", "/Users/ada/proj/.venv",
               "/opt/homebrew/Frameworks/Python.framework/Versions/3.11")
LINUX = System("linux", {"HOME": "/home/ada"}, "/home/ada/proj/.venv/bin/python3.11", "/home/ada/proj/.venv", "/usr")
CALCULATOR = '''from mcp_kit import MCPServer
from helpers import double  # a neighbour module: found only when the script's directory is on the path

app = MCPServer("calculator")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return double(a + b) // 2
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's project with calculator.py (and a neighbour it imports), a fake home, the project as cwd."""
    home = tmp_path / "home"
    home.mkdir()
    for name in ("HOME", "USERPROFILE"):
        monkeypatch.setenv(name, str(home))
    monkeypatch.setenv("APPDATA", str(home / "AppData"))
    for name in ("XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    code = tmp_path / "my project"  # a space, as in "Application Support"
    (code / "pkg").mkdir(parents=True)
    (code / "calculator.py").write_text(CALCULATOR, encoding="utf-8")
    (code / "helpers.py").write_text("def double(n: int) -> int:\n    return 2 * n\n", encoding="utf-8")
    (code / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (code / "pkg" / "tools.py").write_text(CALCULATOR.replace("from helpers import double", "from pkg.helpers "
                                                              "import double"), encoding="utf-8")
    (code / "pkg" / "helpers.py").write_text("def double(n: int) -> int:\n    return 2 * n\n", encoding="utf-8")
    monkeypatch.chdir(code)
    return code


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def validate(client: str, entry: dict[str, Any], kind: str) -> None:
    schema = SCHEMAS[client][kind]
    assert schema is not None, f"{client} has no {kind} entries"
    jsonschema.validate(entry, schema)


# ---------------------------------------------------------------------------- where each client keeps its file


def test_every_client_file_on_every_system() -> None:
    expected = {
        "claude": (r"C:\Users\Ada\AppData\Roaming\Claude\claude_desktop_config.json",
                   "/Users/ada/Library/Application Support/Claude/claude_desktop_config.json",
                   "/home/ada/.config/Claude/claude_desktop_config.json"),
        "claude-code": (r"C:\Users\Ada\.claude.json", "/Users/ada/.claude.json", "/home/ada/.claude.json"),
        "cursor": (r"C:\Users\Ada\.cursor\mcp.json", "/Users/ada/.cursor/mcp.json", "/home/ada/.cursor/mcp.json"),
        "vscode": (r"C:\Users\Ada\AppData\Roaming\Code\User\mcp.json",
                   "/Users/ada/Library/Application Support/Code/User/mcp.json", "/home/ada/.config/Code/User/mcp.json"),
        "windsurf": (r"C:\Users\Ada\.codeium\windsurf\mcp_config.json", "/Users/ada/.codeium/windsurf/mcp_config.json",
                     "/home/ada/.codeium/windsurf/mcp_config.json"),
        "gemini": (r"C:\Users\Ada\.gemini\settings.json", "/Users/ada/.gemini/settings.json",
                   "/home/ada/.gemini/settings.json"),
    }
    for name, (windows, macos, linux) in expected.items():
        client = CLIENTS[name]
        assert client.config_path(WINDOWS, None) == PureWindowsPath(windows), name
        assert str(client.config_path(WINDOWS, None)) == windows, name
        assert client.config_path(MACOS, None) == PurePosixPath(macos), name
        assert client.config_path(LINUX, None) == PurePosixPath(linux), name
    xdg = System("linux", {"HOME": "/home/ada", "XDG_CONFIG_HOME": "/srv/conf"}, "", "", "")
    assert str(CLIENTS["vscode"].config_path(xdg, None)) == "/srv/conf/Code/User/mcp.json"
    moved = System("linux", {"HOME": "/home/ada", "CLAUDE_CONFIG_DIR": "/srv/claude"}, "", "", "")
    assert str(CLIENTS["claude-code"].config_path(moved, None)) == "/srv/claude/.claude.json"


def test_project_files_and_clients_without_one() -> None:
    project = PureWindowsPath(r"D:\code\app")
    found = {name: str(client.config_path(WINDOWS, project)) for name, client in CLIENTS.items()
             if client.project_config is not None}
    assert found == {"claude-code": r"D:\code\app\.mcp.json", "cursor": r"D:\code\app\.cursor\mcp.json",
                     "vscode": r"D:\code\app\.vscode\mcp.json", "gemini": r"D:\code\app\.gemini\settings.json",
                     "mcp.json": r"D:\code\app\mcp.json"}
    for name in ("claude", "windsurf"):
        with pytest.raises(ValueError, match="no per-project config file"):
            CLIENTS[name].config_path(LINUX, PurePosixPath("/p"))
    with pytest.raises(ValueError, match="--project DIR"):
        CLIENTS["mcp.json"].config_path(LINUX, None)
    assert client_named("claude-desktop") is CLIENTS["claude"] and client_named("code") is CLIENTS["vscode"]
    with pytest.raises(ValueError, match="unknown client 'zed'"):
        client_named("zed")


# ---------------------------------------------------------------------------- the entries, per client and system


def test_a_script_entry_on_windows_names_the_venv_python_the_absolute_script_and_pythonpath(project: Path) -> None:
    interpreter = Interpreter(PureWindowsPath(r"C:\Users\Ada\proj\.venv\Scripts\python.exe"),
                              (PureWindowsPath(r"C:\src\mcp_kit"),))
    launch = resolve_target("calculator.py", module=None, server_args=["--log-level", "info"], system=WINDOWS,
                            interpreter=interpreter, env={"API_KEY": "k"})
    assert isinstance(launch, Launch)
    assert launch.name == "calculator"
    assert launch.command == r"C:\Users\Ada\proj\.venv\Scripts\python.exe"
    script = str(PureWindowsPath(str(project / "calculator.py")))
    assert launch.args == ["-m", "mcp_kit", "run", script, "--log-level", "info"]
    assert launch.env == {"PYTHONPATH": f"{PureWindowsPath(str(project))};C:\\src\\mcp_kit", "API_KEY": "k"}
    for name, client in CLIENTS.items():
        entry, notes = client_entry(client, launch, WINDOWS, interpreter)
        validate(name, entry, "stdio")
        assert entry["command"] == launch.command and entry["args"] == launch.args and entry["env"] == launch.env
        assert ("cwd" in entry) == client.cwd  # written only where the client documents it
        assert not notes


def test_module_and_package_targets(project: Path) -> None:
    interpreter = Interpreter(PurePosixPath("/home/ada/proj/.venv/bin/python"), ())
    module = resolve_target("pkg.tools:app", module=None, server_args=[], system=LINUX, interpreter=interpreter)
    assert isinstance(module, Launch)
    assert (module.name, module.args) == ("tools", ["-m", "mcp_kit", "run", "pkg.tools:app"])
    assert module.env == {"PYTHONPATH": str(project)} and module.cwd == str(project)
    package = resolve_target(None, module="servers.stock", server_args=["--provider", "sample"], system=LINUX,
                             interpreter=interpreter, name="quotes")
    assert isinstance(package, Launch)
    assert (package.name, package.args) == ("quotes", ["-m", "servers.stock", "--provider", "sample"])
    assert package.env == {"PYTHONPATH": str(ROOT)}
    reference = resolve_target("weather", module=None, server_args=[], system=LINUX, interpreter=interpreter,
                               provider="sample")
    assert isinstance(reference, Launch)
    assert reference.args == ["-m", "servers.weather", "--provider", "sample"] and reference.cwd == str(ROOT)
    with pytest.raises(Exception, match="no module named 'nosuch'"):
        resolve_target("nosuch:app", module=None, server_args=[], system=LINUX, interpreter=interpreter)
    with pytest.raises(Exception, match="no such file: missing.py"):
        resolve_target("missing.py", module=None, server_args=[], system=LINUX, interpreter=interpreter)
    with pytest.raises(Exception, match="filesystem server needs --root"):
        resolve_target("filesystem", module=None, server_args=[], system=LINUX, interpreter=interpreter)


def test_a_url_is_each_clients_own_remote_entry_or_a_proxy_for_claude_desktop() -> None:
    interpreter = Interpreter(PurePosixPath("/home/ada/proj/.venv/bin/python"), ())
    remote = resolve_target("https://mcp.example.com/mcp", module=None, server_args=[], system=LINUX,
                            interpreter=interpreter, headers={"Authorization": "Bearer t"})
    assert isinstance(remote, Remote) and remote.name == "mcp-example-com"
    written = {}
    for name, client in CLIENTS.items():
        entry, notes = client_entry(client, remote, LINUX, interpreter)
        written[name] = entry
        validate(name, entry, "remote" if client.remote is not None else "stdio")
    assert written["claude"] == {"command": "/home/ada/proj/.venv/bin/python",
                                 "args": ["-m", "mcp_kit", "proxy", "https://mcp.example.com/mcp",
                                          "--header", "Authorization: Bearer t"]}
    headers = {"headers": {"Authorization": "Bearer t"}}
    assert written["claude-code"] == {"type": "http", "url": "https://mcp.example.com/mcp", **headers}
    assert written["vscode"] == written["claude-code"] == written["mcp.json"]
    assert written["cursor"] == {"url": "https://mcp.example.com/mcp", **headers}
    assert written["windsurf"] == {"serverUrl": "https://mcp.example.com/mcp", **headers}
    assert written["gemini"] == {"httpUrl": "https://mcp.example.com/mcp", **headers}
    sse = resolve_target("http://127.0.0.1:8000/sse", module=None, server_args=[], system=LINUX,
                         interpreter=interpreter)
    assert client_entry(CLIENTS["gemini"], sse, LINUX, interpreter)[0] == {"url": "http://127.0.0.1:8000/sse"}
    assert client_entry(CLIENTS["claude-code"], sse, LINUX, interpreter)[0]["type"] == "sse"


def test_the_recorded_examples_match_their_schemas() -> None:
    """The schemas accept what each client's own documented examples contain (so they are not too strict)."""
    for name in CLIENTS:
        schema = SCHEMAS[name]
        servers = read_json(FIXTURES / f"{name}.json")[schema["container"]]
        assert servers, name
        for entry in servers.values():
            remote = any(key in entry for key in ("url", "serverUrl", "httpUrl"))
            validate(name, entry, "remote" if remote else "stdio")
        assert schema["container"] == CLIENTS[name].container


# ---------------------------------------------------------------------------- writing


@pytest.mark.parametrize("client", list(CLIENTS))
def test_install_merges_into_the_clients_example_config_keeping_the_rest_and_the_mode(
        client: str, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = project / "config" / f"{client}.json"
    path.parent.mkdir()
    original = (FIXTURES / f"{client}.json").read_text(encoding="utf-8")
    path.write_text(original, encoding="utf-8")
    path.chmod(0o644)
    assert main(["install", client, "calculator.py", "--config-path", str(path), "--env", "MODE=test"]) == 0
    written = read_json(path)
    before = json.loads(original)
    container = CLIENTS[client].container
    assert {key: value for key, value in written.items() if key != container} == \
        {key: value for key, value in before.items() if key != container}  # every other setting untouched
    assert list(written[container]) == [*before[container], "calculator"]  # others kept, in order
    assert all(written[container][name] == entry for name, entry in before[container].items())
    validate(client, written[container]["calculator"], "stdio")
    assert written[container]["calculator"]["env"]["MODE"] == "test"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    backups = list(path.parent.glob(f"{path.name}.bak-*"))
    assert len(backups) == 1 and backups[0].read_text(encoding="utf-8") == original
    out = capsys.readouterr()
    assert f'wrote "calculator" to {path}' in out.out
    assert main(["install", client, "calculator.py", "--config-path", str(path), "--env", "MODE=test"]) == 0
    assert "nothing written" in capsys.readouterr().out
    assert len(list(path.parent.glob(f"{path.name}.bak-*"))) == 1


def test_dry_run_writes_nothing_and_a_new_file_gets_the_umask_mode(project: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "vscode", "calculator.py", "--project", str(project), "--dry-run"]) == 0
    out = capsys.readouterr()
    printed = json.loads(out.out)
    assert list(printed["servers"]) == ["calculator"] and printed["servers"]["calculator"]["type"] == "stdio"
    assert str(project / ".vscode" / "mcp.json") in out.err
    assert not (project / ".vscode").exists()
    umask = os.umask(0o022)
    try:
        assert main(["install", "gemini", "calculator.py", "--project", str(project)]) == 0
    finally:
        os.umask(umask)
    settings = project / ".gemini" / "settings.json"
    assert stat.S_IMODE(settings.stat().st_mode) == 0o644  # not the temporary file's 0600
    assert read_json(settings)["mcpServers"]["calculator"]["cwd"] == str(project)


def test_user_files_land_in_the_home(project: Path) -> None:
    home = Path(os.environ["HOME"])
    assert main(["install", "claude-code", "calculator.py"]) == 0
    assert "calculator" in read_json(home / ".claude.json")["mcpServers"]
    assert main(["install", "windsurf", "https://mcp.example.com/mcp"]) == 0
    assert read_json(home / ".codeium" / "windsurf" / "mcp_config.json")["mcpServers"] == {
        "mcp-example-com": {"serverUrl": "https://mcp.example.com/mcp"}}
    assert main(["install", "mcp.json", "calculator.py"]) == 0  # no user file: the current directory's mcp.json
    assert "calculator" in read_json(project / "mcp.json")["mcpServers"]


def test_a_file_with_comments_or_the_wrong_shape_is_left_alone(project: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    jsonc = project / ".vscode" / "mcp.json"
    jsonc.parent.mkdir()
    jsonc.write_text('{\n  // mine\n  "servers": {}\n}\n', encoding="utf-8")
    assert main(["install", "vscode", "calculator.py", "--project", str(project)]) == 1
    assert "not plain JSON" in capsys.readouterr().err
    assert jsonc.read_text(encoding="utf-8").startswith("{\n  // mine")
    odd = project / "odd.json"
    odd.write_text('{"mcpServers": []}', encoding="utf-8")
    assert main(["install", "cursor", "calculator.py", "--config-path", str(odd)]) == 1
    assert odd.read_text(encoding="utf-8") == '{"mcpServers": []}'
    assert not list(project.glob("*.bak-*"))


def test_bad_options_are_usage_errors(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "cursor", "calculator.py", "--env", "NOEQUALS", "--dry-run"]) == 2
    assert "--env expects KEY=VALUE" in capsys.readouterr().err
    assert main(["install", "cursor", "https://x.example/mcp", "--", "--port", "1"]) == 2
    assert main(["install", "windsurf", "calculator.py", "--project", str(project)]) == 2
    assert "no per-project config file" in capsys.readouterr().err


def test_config_stays_as_an_alias_that_prints_unless_write(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "gemini", "calculator.py"]) == 0
    out = capsys.readouterr()
    assert "calculator" in json.loads(out.out)["mcpServers"] and "with --write" in out.err
    home = Path(os.environ["HOME"])
    assert not (home / ".gemini").exists()
    assert main(["config", "gemini", "calculator.py", "--write"]) == 0
    assert "calculator" in read_json(home / ".gemini" / "settings.json")["mcpServers"]


# ---------------------------------------------------------------------------- the written entry starts the server


def bare_environment(entry: dict[str, Any], home: Path) -> dict[str, str]:
    """What a desktop client gives a server: no venv on PATH, no PYTHONPATH of ours; the entry's own env."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), **coverage_env(), **entry.get("env", {})}


async def launch_and_list(entry: dict[str, Any], home: Path) -> tuple[list[str], str]:
    """Start exactly entry's command, args, env and cwd (`/` when it has none) and use it with the SDK client."""
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=bare_environment(entry, home),
                                   cwd=entry.get("cwd", "/"))
    assert "VIRTUAL_ENV" not in params.env  # type: ignore[operator]
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = [tool.name for tool in (await session.list_tools()).tools]
            if "add" in tools:
                result = await session.call_tool("add", {"a": 2, "b": 3})
            else:
                result = await session.call_tool("get_stock_price", {"ticker": "AAPL"})
            assert result.is_error is False
            block = result.content[0]
            assert isinstance(block, types.TextContent)
            return tools, block.text


@pytest.mark.anyio
@pytest.mark.parametrize("client", list(CLIENTS))
async def test_the_written_script_entry_launches_from_slash_with_a_bare_environment(client: str,
                                                                                   project: Path) -> None:
    path = project / "written.json"
    assert main(["install", client, "calculator.py", "--config-path", str(path)]) == 0
    entry = read_json(path)[CLIENTS[client].container]["calculator"]
    assert Path(entry["command"]).is_absolute() and entry["command"] == str(Path(sys.prefix) / "bin" / "python")
    tools, text = await launch_and_list(entry, Path(os.environ["HOME"]))
    assert (tools, text) == (["add"], "5")


@pytest.mark.anyio
async def test_module_package_and_reference_entries_launch_with_a_bare_environment(project: Path) -> None:
    path = project / "written.json"
    home = Path(os.environ["HOME"])
    assert main(["install", "claude", "pkg.tools:app", "--config-path", str(path)]) == 0
    assert main(["install", "cursor", "-m", "servers.stock", "--name", "quotes", "--config-path", str(path),
                 "--", "--provider", "sample"]) == 0
    assert main(["install", "claude-code", "stock", "--provider", "sample", "--config-path", str(path)]) == 0
    servers = read_json(path)["mcpServers"]
    assert (await launch_and_list(servers["tools"], home)) == (["add"], "5")
    tools, text = await launch_and_list(servers["quotes"], home)
    assert "get_stock_price" in tools and "AAPL" in text
    tools, text = await launch_and_list(servers["stock"], home)
    assert "get_stock_price" in tools and "AAPL" in text


@pytest.mark.anyio
async def test_a_dev_entry_runs_mcp_kit_dev_and_launches_with_a_bare_environment(project: Path) -> None:
    path = project / "written.json"
    assert main(["install", "cursor", "calculator.py", "--dev", "--config-path", str(path),
                 "--", "--log-level", "info"]) == 0
    assert main(["install", "windsurf", "pkg.tools:app", "--dev", "--config-path", str(path)]) == 0
    servers = read_json(path)["mcpServers"]
    assert servers["calculator"]["args"] == ["-m", "mcp_kit", "dev", str(project / "calculator.py"), "--",
                                             "--log-level", "info"]
    assert servers["tools"]["args"] == ["-m", "mcp_kit", "dev", "pkg.tools:app"]
    home = Path(os.environ["HOME"])
    assert (await launch_and_list(servers["calculator"], home)) == (["add"], "5")
    assert (await launch_and_list(servers["tools"], home)) == (["add"], "5")
    assert main(["install", "cursor", "stock", "--dev", "--dry-run"]) == 2


def test_config_write_keeps_the_files_mode(project: Path) -> None:
    path = project / "claude.json"
    path.write_text('{"mcpServers": {}}', encoding="utf-8")
    path.chmod(0o640)
    assert main(["config", "claude", "stock", "--write", "--config-path", str(path)]) == 0
    assert list(read_json(path)["mcpServers"]) == ["stock"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_options_may_come_before_the_target(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "cursor", "--env", "A=1", "calculator.py", "--dry-run"]) == 0
    assert json.loads(capsys.readouterr().out)["mcpServers"]["calculator"]["env"]["A"] == "1"

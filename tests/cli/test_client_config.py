"""`mcp-kit config claude|cursor` on every system (faked), the filesystem root, replaced entries, the example file."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import pytest

from mcp_kit._cli import client_config
from mcp_kit._cli.client_config import REFERENCE_SERVERS, Installation, config_command, entries
from mcp_kit._cli.client_paths import System
from mcp_kit._cli.main import main
from tests.helpers.support import ROOT

WINDOWS = System("win32", {"USERPROFILE": r"C:\Users\Ada", "APPDATA": r"C:\Users\Ada\AppData\Roaming"},
                 r"C:\Users\Ada\mcp_kit\.venv\Scripts\python.exe", r"C:\Users\Ada\mcp_kit\.venv",
                 r"C:\Program Files\Python311")
MACOS = System("darwin", {"HOME": "/Users/ada"}, "/Users/ada/mcp_kit/.venv/bin/python3", "/Users/ada/mcp_kit/.venv",
               "/opt/homebrew/opt/python@3.11/Frameworks/Python.framework/Versions/3.11")
LINUX = System("linux", {"HOME": "/home/ada"}, "/home/ada/mcp_kit/.venv/bin/python3.11", "/home/ada/mcp_kit/.venv",
               "/usr")


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


# ---------------------------------------------------------------------------- where, on each system


def test_claude_desktop_config_file_on_each_system() -> None:
    assert WINDOWS.claude_config() == PureWindowsPath(r"C:\Users\Ada\AppData\Roaming\Claude\claude_desktop_config.json")
    assert str(WINDOWS.claude_config()) == r"C:\Users\Ada\AppData\Roaming\Claude\claude_desktop_config.json"
    no_appdata = System("win32", {"USERPROFILE": r"D:\home\ada"}, "python.exe", "x", "x")
    assert str(no_appdata.claude_config()) == r"D:\home\ada\AppData\Roaming\Claude\claude_desktop_config.json"
    assert MACOS.claude_config() == PurePosixPath(
        "/Users/ada/Library/Application Support/Claude/claude_desktop_config.json")
    assert LINUX.claude_config() == PurePosixPath("/home/ada/.config/Claude/claude_desktop_config.json")
    xdg = System("linux", {"HOME": "/home/ada", "XDG_CONFIG_HOME": "/srv/conf"}, "", "", "")
    assert xdg.claude_config() == PurePosixPath("/srv/conf/Claude/claude_desktop_config.json")
    relative_xdg = System("linux", {"HOME": "/home/ada", "XDG_CONFIG_HOME": "conf"}, "", "", "")
    assert relative_xdg.claude_config() == LINUX.claude_config()  # a relative XDG value is invalid: ignored


def test_cursor_config_file_on_each_system() -> None:
    assert str(WINDOWS.cursor_config()) == r"C:\Users\Ada\.cursor\mcp.json"
    drive_and_path = System("win32", {"HOMEDRIVE": "E:", "HOMEPATH": r"\Users\ada"}, "", "", "")
    assert str(drive_and_path.cursor_config()) == r"E:\Users\ada\.cursor\mcp.json"
    assert MACOS.cursor_config() == PurePosixPath("/Users/ada/.cursor/mcp.json")
    assert LINUX.cursor_config() == PurePosixPath("/home/ada/.cursor/mcp.json")
    assert LINUX.cursor_config(PurePosixPath("/work/app")) == PurePosixPath("/work/app/.cursor/mcp.json")


def test_the_interpreter_named_on_each_system() -> None:
    assert str(WINDOWS.python()) == r"C:\Users\Ada\mcp_kit\.venv\Scripts\python.exe"
    assert str(MACOS.python()) == "/Users/ada/mcp_kit/.venv/bin/python"  # not the python3 alias that ran mcp-kit
    assert str(LINUX.python()) == "/home/ada/mcp_kit/.venv/bin/python"
    outside_a_venv = System("linux", {}, "/usr/bin/python3.11", "/usr", "/usr")
    assert str(outside_a_venv.python()) == "/usr/bin/python3.11"


def test_pythonpath_separator_on_each_system() -> None:
    assert WINDOWS.search_path([r"C:\a", r"D:\b", r"C:\a"]) == r"C:\a;D:\b"
    assert LINUX.search_path(["/a", "/b", "/a"]) == "/a:/b"
    assert MACOS.search_path(["/a"]) == "/a"


def test_windows_entries_use_backslashes_escaped_in_json() -> None:
    made = entries(list(REFERENCE_SERVERS), system=WINDOWS, python=WINDOWS.python(), root=r"C:\Users\Ada\mcp_kit",
                   pythonpath=[r"C:\Users\Ada\mcp_kit", r"C:\src\kit"], fs_roots=[r"D:\notes"], provider="sample")
    assert made["stock"] == {"command": r"C:\Users\Ada\mcp_kit\.venv\Scripts\python.exe",
                             "args": ["-m", "servers.stock", "--provider", "sample"], "cwd": r"C:\Users\Ada\mcp_kit",
                             "env": {"PYTHONPATH": r"C:\Users\Ada\mcp_kit;C:\src\kit"}}
    assert made["filesystem"]["args"] == ["-m", "servers.filesystem", "--root", r"D:\notes"]
    text = json.dumps({"mcpServers": made})
    assert r'"command": "C:\\Users\\Ada\\mcp_kit\\.venv\\Scripts\\python.exe"' in text
    assert json.loads(text)["mcpServers"] == made


def test_the_command_on_a_faked_windows_writes_windows_entries(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                               ) -> None:
    install = Installation(WINDOWS.python(), PureWindowsPath(r"C:\Users\Ada\mcp_kit"),
                           [PureWindowsPath(r"C:\Users\Ada\mcp_kit")])
    assert config_command("claude", ["stock"], write=False, project=None, override=None, fs_roots=[],
                          provider=None, system=WINDOWS, installation=install) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["mcpServers"]["stock"]["command"] == r"C:\Users\Ada\mcp_kit\.venv\Scripts\python.exe"
    assert r"C:\Users\Ada\AppData\Roaming\Claude\claude_desktop_config.json" in err
    written = tmp_path / "claude.json"
    assert config_command("cursor", ["weather"], write=True, project=None, override=written, fs_roots=[],
                          provider=None, system=WINDOWS, installation=install) == 0
    raw = written.read_text(encoding="utf-8")
    assert r'"PYTHONPATH": "C:\\Users\\Ada\\mcp_kit"' in raw
    assert read_json(written)["mcpServers"]["weather"]["cwd"] == r"C:\Users\Ada\mcp_kit"


# ---------------------------------------------------------------------------- the filesystem root


def test_without_root_the_filesystem_server_is_left_out_and_that_is_said(
        home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # run from the repository: it must not become a root the client may write
    assert main(["config", "claude"]) == 0
    out, err = capsys.readouterr()
    assert list(json.loads(out)["mcpServers"]) == ["stock", "weather"]
    assert "filesystem left out" in err and "--root DIR" in err
    assert main(["config", "claude", "--write"]) == 0
    written = read_json(client_config.claude_config_path())
    assert list(written["mcpServers"]) == ["stock", "weather"]
    assert "filesystem left out" in capsys.readouterr().err


def test_naming_the_filesystem_server_without_a_root_is_a_usage_error(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "claude", "filesystem"]) == 2
    err = capsys.readouterr().err
    assert "the filesystem server needs --root DIR" in err and "There is no default" in err
    assert main(["config", "cursor", "filesystem", "--root", str(home / "missing")]) == 2
    assert "not a directory (create it first" in capsys.readouterr().err
    assert not list(home.rglob("*.json"))


def test_a_root_is_expanded_checked_and_announced(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / "notes").mkdir()
    assert main(["config", "claude", "--root", "~/notes"]) == 0
    out, err = capsys.readouterr()
    servers = json.loads(out)["mcpServers"]
    assert list(servers) == ["stock", "weather", "filesystem"]
    assert servers["filesystem"]["args"] == ["-m", "servers.filesystem", "--root", str((home / "notes").resolve())]
    assert f"filesystem may read and write under {(home / 'notes').resolve()}" in err
    assert main(["config", "claude", "stock", "--root", "~/notes"]) == 0
    out, err = capsys.readouterr()
    assert list(json.loads(out)["mcpServers"]) == ["stock"] and "--root ignored" in err


# ---------------------------------------------------------------------------- replacing entries


def test_write_says_what_it_replaced_and_skips_a_write_that_changes_nothing(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = client_config.claude_config_path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcpServers": {"stock": {"command": "/usr/bin/python3", "args": ["old.py"]}}}))
    assert main(["config", "claude", "stock", "weather", "--write"]) == 0
    out, err = capsys.readouterr()
    assert 'replaced the existing "stock" entry, which started: /usr/bin/python3 old.py (the backup keeps it)' in err
    assert "weather" not in err.split("replaced")[1]  # weather was added, not replaced
    backups = list(path.parent.glob("claude_desktop_config.json.bak-*"))
    assert len(backups) == 1 and str(backups[0]) in out

    assert main(["config", "claude", "stock", "weather", "--write"]) == 0
    out, err = capsys.readouterr()
    assert "already has these entries (stock, weather); nothing written" in out and "replaced" not in err
    assert len(list(path.parent.glob("claude_desktop_config.json.bak-*"))) == 1

    assert main(["config", "claude", "stock", "--provider", "sample", "--write"]) == 0
    err = capsys.readouterr().err
    assert 'replaced the existing "stock" entry, which started: ' in err and "-m servers.stock (the backup" in err
    assert read_json(path)["mcpServers"]["stock"]["args"] == ["-m", "servers.stock", "--provider", "sample"]


# ---------------------------------------------------------------------------- the example file


def test_the_example_config_is_what_mcp_kit_config_claude_generates() -> None:
    """claude_desktop_config.example.json = `mcp-kit config claude --root /path/to/your/project` on Linux,
    with the checkout at /path/to/mcp_kit."""
    placeholder = System("linux", {"HOME": "/home/you"}, "/path/to/mcp_kit/.venv/bin/python3",
                         "/path/to/mcp_kit/.venv", "/usr")
    generated = entries(list(REFERENCE_SERVERS), system=placeholder, python=placeholder.python(),
                        root="/path/to/mcp_kit", fs_roots=["/path/to/your/project"], provider=None)
    example = read_json(ROOT / "claude_desktop_config.example.json")
    assert example == {"mcpServers": generated}


def test_this_machine_names_the_venv_python(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "cursor", "stock"]) == 0
    entry = json.loads(capsys.readouterr().out)["mcpServers"]["stock"]
    expected = Path(sys.prefix) / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if sys.prefix == sys.base_prefix or not expected.exists():
        expected = Path(sys.executable)
    assert entry["command"] == str(expected) and Path(entry["command"]).exists()
    assert entry["env"] == {"PYTHONPATH": str(ROOT)} and entry["cwd"] == str(ROOT)

"""The MCP clients `mcp-kit install` writes to: where each keeps its config, and the shape of an entry.

Each client is described by its documented config format (the sources are cited per client and in
tests/fixtures/client_configs/README.md): the top-level object that holds the servers (`mcpServers`,
or `servers` for VS Code), the fields of a local (stdio) entry, whether it honours a working
directory, and how it names a remote (HTTP) server — or `None` when its config file cannot name one,
in which case the installer writes a stdio entry that runs `mcp-kit proxy URL`.

Pure functions of a `System` (client_paths.py), so every system's paths are tested on any machine.
Imports only the standard library.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from .client_paths import System


def _remote_typed(url: str, headers: Mapping[str, str], sse: bool) -> dict[str, Any]:
    """`{"type": "http"|"sse", "url": ...}`: Claude Code, VS Code and the plain mcp.json."""
    entry: dict[str, Any] = {"type": "sse" if sse else "http", "url": url}
    if headers:
        entry["headers"] = dict(headers)
    return entry


def _remote_url(url: str, headers: Mapping[str, str], sse: bool) -> dict[str, Any]:
    """`{"url": ...}`: Cursor (it picks Streamable HTTP or SSE itself)."""
    entry: dict[str, Any] = {"url": url}
    if headers:
        entry["headers"] = dict(headers)
    return entry


def _remote_windsurf(url: str, headers: Mapping[str, str], sse: bool) -> dict[str, Any]:
    """`{"serverUrl": ...}`: Windsurf."""
    entry: dict[str, Any] = {"serverUrl": url}
    if headers:
        entry["headers"] = dict(headers)
    return entry


def _remote_gemini(url: str, headers: Mapping[str, str], sse: bool) -> dict[str, Any]:
    """`{"httpUrl": ...}` for Streamable HTTP, `{"url": ...}` for legacy SSE: Gemini CLI."""
    entry: dict[str, Any] = {"url" if sse else "httpUrl": url}
    if headers:
        entry["headers"] = dict(headers)
    return entry


def _xdg_config(system: System) -> PurePath:
    xdg = system.environ.get("XDG_CONFIG_HOME", "")
    return system.path(xdg) if xdg and system.path(xdg).is_absolute() else system.home() / ".config"


def _claude_code_user(system: System) -> PurePath:
    configured = system.environ.get("CLAUDE_CONFIG_DIR", "")
    return (system.path(configured) if configured else system.home()) / ".claude.json"


def _vscode_user(system: System) -> PurePath:
    if system.windows:
        appdata = system.environ.get("APPDATA")
        base = system.path(appdata) if appdata else system.home() / "AppData" / "Roaming"
    elif system.platform == "darwin":
        base = system.home() / "Library" / "Application Support"
    else:
        base = _xdg_config(system)
    return base / "Code" / "User" / "mcp.json"


@dataclass(frozen=True)
class Client:
    """One client's config format and location."""

    name: str  # as given on the command line
    title: str  # as the user knows it
    container: str  # the top-level object that maps server names to entries
    stdio_type: bool  # a stdio entry carries "type": "stdio"
    cwd: bool  # a stdio entry may carry "cwd" (documented)
    remote: Callable[[str, Mapping[str, str], bool], dict[str, Any]] | None  # None: cannot name a URL
    user_config: Callable[[System], PurePath] | None  # the per-user file (None: none)
    project_config: tuple[str, ...] | None  # the project file, relative to the project directory
    source: str  # where the format is documented
    restart: str  # what the user does for the client to pick the entry up

    def config_path(self, system: System, project: PurePath | None) -> PurePath:
        """The file to write: the project's when `project` is given (or the client has no user file)."""
        if project is not None:
            if self.project_config is None:
                raise ValueError(f"{self.title} has no per-project config file; leave out --project")
            return system.path(project, *self.project_config)
        if self.user_config is None:
            raise ValueError(f"{self.title} has no per-user config file; name the directory with --project DIR "
                             f"or the file with --config-path FILE")
        return self.user_config(system)

    def stdio_entry(self, command: str, args: list[str], env: Mapping[str, str], cwd: str | None) -> dict[str, Any]:
        """A local entry in this client's shape; `cwd` is written only where the client documents it."""
        entry: dict[str, Any] = {"type": "stdio"} if self.stdio_type else {}
        entry["command"] = command
        entry["args"] = list(args)
        if env:
            entry["env"] = dict(env)
        if cwd is not None and self.cwd:
            entry["cwd"] = cwd
        return entry


CLIENTS: dict[str, Client] = {client.name: client for client in (
    Client("claude", "Claude Desktop", "mcpServers", stdio_type=False, cwd=False, remote=None,
           user_config=System.claude_config, project_config=None,
           source="https://modelcontextprotocol.io/docs/develop/connect-local-servers",
           restart="restart Claude Desktop (quit it fully) to start the server"),
    Client("claude-code", "Claude Code", "mcpServers", stdio_type=True, cwd=False, remote=_remote_typed,
           user_config=_claude_code_user, project_config=(".mcp.json",),
           source="https://code.claude.com/docs/en/mcp",
           restart="start a new Claude Code session (check it with `claude mcp list` or /mcp)"),
    Client("cursor", "Cursor", "mcpServers", stdio_type=False, cwd=False, remote=_remote_url,
           user_config=lambda system: system.cursor_config(), project_config=(".cursor", "mcp.json"),
           source="https://cursor.com/docs/context/mcp",
           restart="reload Cursor's MCP servers (Settings > MCP) to start it"),
    Client("vscode", "VS Code", "servers", stdio_type=True, cwd=True, remote=_remote_typed,
           user_config=_vscode_user, project_config=(".vscode", "mcp.json"),
           source="https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",
           restart="VS Code picks the change up (MCP: List Servers shows it; start it there)"),
    Client("windsurf", "Windsurf", "mcpServers", stdio_type=False, cwd=False, remote=_remote_windsurf,
           user_config=lambda system: system.home() / ".codeium" / "windsurf" / "mcp_config.json",
           project_config=None, source="https://docs.windsurf.com/windsurf/cascade/mcp",
           restart="press Refresh in Cascade's MCP panel to start it"),
    Client("gemini", "Gemini CLI", "mcpServers", stdio_type=False, cwd=True, remote=_remote_gemini,
           user_config=lambda system: system.home() / ".gemini" / "settings.json",
           project_config=(".gemini", "settings.json"),
           source="https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md",
           restart="start Gemini CLI again (/mcp lists the server)"),
    Client("mcp.json", "mcp.json", "mcpServers", stdio_type=False, cwd=True, remote=_remote_typed,
           user_config=None, project_config=("mcp.json",),
           source="the common mcpServers format (command, args, env, cwd; type + url for remote servers)",
           restart="point your client at the file"),
)}
ALIASES = {"claude-desktop": "claude", "code": "vscode", "vs-code": "vscode", "gemini-cli": "gemini",
           "json": "mcp.json", "mcp-json": "mcp.json"}


def client_named(name: str) -> Client:
    """The client called `name` (or one of its aliases)."""
    found = CLIENTS.get(ALIASES.get(name, name))
    if found is None:
        raise ValueError(f"unknown client {name!r}; choose from {', '.join(CLIENTS)}")
    return found

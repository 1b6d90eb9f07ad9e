"""What a proxy fronts: a command line (stdio), a URL (Streamable HTTP, falling back to legacy SSE), or a
client configuration naming several servers, each then under its name as a namespace.

    "npx -y @modelcontextprotocol/server-everything"   or ["npx", "-y", "..."]   one stdio server
    "https://mcp.example.com/mcp"                                              one remote server
    "servers.json" / {"mcpServers": {"files": {"command": ..., "args": [...]}, "api": {"url": ...}}}

A configuration's entries are Claude Desktop's shape (`command`, `args`, `env`, `cwd`; or `url`,
`headers`). Imports the client's `is_url` only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..client._connect import is_url

NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,62}$")  # no "_" or "+": they separate the namespace


@dataclass(frozen=True)
class Target:
    """One upstream server: a command line or a URL, and how to reach it."""

    command: tuple[str, ...] | str | None = None
    url: str | None = None
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def description(self) -> str:
        if self.url is not None:
            return self.url
        return self.command if isinstance(self.command, str) else " ".join(self.command or ())

    @property
    def where(self) -> str | Sequence[str]:
        assert self.url is not None or self.command is not None
        return self.url if self.url is not None else self.command  # type: ignore[return-value]


def parse_targets(target: str | Sequence[str] | Mapping[str, Any]) -> dict[str | None, Target]:
    """The servers `target` names: {None: one} for a command or URL, {namespace: ...} for a configuration."""
    if isinstance(target, Mapping):
        return _from_config(target, "the configuration")
    if isinstance(target, str):
        text = target.strip()
        if is_url(text):
            return {None: Target(url=text)}
        if text.endswith(".json") and Path(text).is_file():
            return _from_config(_read_json(Path(text)), text)
        if not text:
            raise ValueError("the proxy needs a target: a command line, an http(s):// URL or a client-config JSON file")
        return {None: Target(command=text)}
    argv = tuple(target)
    if not argv:
        raise ValueError("the proxy needs a target: a command line, an http(s):// URL or a client-config JSON file")
    if len(argv) == 1:
        return parse_targets(argv[0]) if (is_url(argv[0]) or argv[0].endswith(".json")) else {None: Target(argv)}
    return {None: Target(command=argv)}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the client configuration {path}: {exc}") from None


def _from_config(config: Mapping[str, Any], where: str) -> dict[str | None, Target]:
    servers = config.get("mcpServers", config.get("servers"))
    if not isinstance(servers, Mapping) or not servers:
        raise ValueError(f"{where} names no servers: expected {{\"mcpServers\": {{NAME: {{\"command\": ...}} or "
                         "{\"url\": ...}}}}")
    targets: dict[str | None, Target] = {}
    for name, entry in servers.items():
        if not isinstance(name, str) or not NAMESPACE.match(name):
            raise ValueError(f"{where}: server name {name!r} cannot be a namespace (letters, digits and '-', "
                             "starting with a letter or digit)")
        if not isinstance(entry, Mapping):
            raise ValueError(f"{where}: server {name!r} must be an object")
        if isinstance(entry.get("url"), str):
            headers = entry.get("headers") or {}
            targets[name] = Target(url=entry["url"], headers={str(k): str(v) for k, v in dict(headers).items()})
        elif isinstance(entry.get("command"), str):
            args = entry.get("args") or []
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                raise ValueError(f"{where}: server {name!r}: 'args' must be a list of strings")
            env = entry.get("env")
            targets[name] = Target(command=(entry["command"], *args),
                                   env={str(k): str(v) for k, v in dict(env).items()} if env else None,
                                   cwd=entry.get("cwd") if isinstance(entry.get("cwd"), str) else None)
        else:
            raise ValueError(f"{where}: server {name!r} needs a 'command' or a 'url'")
    return targets

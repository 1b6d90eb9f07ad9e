"""`mcp-kit config claude|cursor`: the entries that start the reference servers from Claude Desktop or Cursor.

Those clients start servers without the shell's PATH and without honouring a working directory,
so each entry names the current interpreter by absolute path and sets `cwd` and `PYTHONPATH` to the
repository root. Writing merges into the existing file: other servers are kept, the file is backed
up first, and a file that is not valid JSON is left alone.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .exit_codes import CommandError

REFERENCE_SERVERS = ("stock", "weather", "filesystem")
CLIENTS = ("claude", "cursor")


def repo_root() -> Path:
    """The directory that contains the `servers` package."""
    spec = importlib.util.find_spec("servers")
    if spec is None or not spec.submodule_search_locations:
        raise CommandError("the reference servers (package 'servers') are not importable from this interpreter")
    return Path(next(iter(spec.submodule_search_locations))).resolve().parent


def server_entry(name: str, *, python: str, root: Path, fs_roots: list[Path], provider: str | None) -> dict[str, Any]:
    """One `mcpServers` entry: `python -m servers.NAME ...` with cwd and PYTHONPATH at the repo root."""
    args = ["-m", f"servers.{name}"]
    if name == "filesystem":
        for directory in fs_roots:
            args += ["--root", str(directory)]
    elif provider:
        args += ["--provider", provider]
    return {"command": python, "args": args, "cwd": str(root), "env": {"PYTHONPATH": str(root)}}


def entries(names: list[str], *, fs_roots: list[Path], provider: str | None) -> dict[str, dict[str, Any]]:
    root = repo_root()
    python = str(Path(sys.executable).absolute())
    return {name: server_entry(name, python=python, root=root, fs_roots=fs_roots, provider=provider) for name in names}


def claude_config_path(platform: str = sys.platform, environ: Mapping[str, str] = os.environ,
                       home: Path | None = None) -> Path:
    """Where Claude Desktop keeps claude_desktop_config.json on this OS."""
    home = home or Path.home()
    if platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if platform.startswith("win"):
        appdata = environ.get("APPDATA") or str(home / "AppData" / "Roaming")
        return Path(appdata) / "Claude" / "claude_desktop_config.json"
    config_home = environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return Path(config_home) / "Claude" / "claude_desktop_config.json"


def cursor_config_path(project: Path | None = None, home: Path | None = None) -> Path:
    """~/.cursor/mcp.json, or PROJECT/.cursor/mcp.json for one project."""
    return (project if project is not None else (home or Path.home())) / ".cursor" / "mcp.json"


def load_config(path: Path) -> dict[str, Any]:
    """The existing config (empty when there is none); refuses anything that is not a JSON object."""
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CommandError(f"{path} is not valid JSON ({exc}); fix it or move it away. Nothing was written.",
                           code=1) from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise CommandError(f"{path} does not look like an MCP client config (expected an object with an "
                           f"\"mcpServers\" object); nothing was written.", code=1)
    return data


def merge(config: dict[str, Any], new_entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """`config` with `new_entries` added to (or replacing the same names in) mcpServers; the rest untouched."""
    merged = dict(config)
    merged["mcpServers"] = {**config.get("mcpServers", {}), **new_entries}
    return merged


def backup(path: Path) -> Path | None:
    """Copy `path` to `path.bak-YYYYmmdd-HHMMSS` (never overwriting an earlier backup)."""
    if not path.exists():
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.bak-{stamp}")
    counter = 1
    while target.exists():
        target = path.with_name(f"{path.name}.bak-{stamp}-{counter}")
        counter += 1
    target.write_bytes(path.read_bytes())
    return target


def write_config(path: Path, config: dict[str, Any]) -> None:
    """Write JSON atomically (a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(config, out, indent=2, ensure_ascii=False)
            out.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def config_path(client: str, project: Path | None, override: Path | None) -> Path:
    if override is not None:
        return override
    if client == "claude":
        if project is not None:
            raise CommandError("--project applies to cursor only (Claude Desktop has one config file)")
        return claude_config_path()
    return cursor_config_path(project.resolve() if project is not None else None)


def config_command(client: str, names: list[str], *, write: bool, project: Path | None, override: Path | None,
                   fs_roots: list[Path], provider: str | None) -> int:
    """Print the entries, or merge them into the client's config file."""
    unknown = [name for name in names if name not in REFERENCE_SERVERS]
    if unknown:
        raise CommandError(f"unknown server {', '.join(unknown)}; choose from {', '.join(REFERENCE_SERVERS)}")
    chosen = list(dict.fromkeys(names)) or list(REFERENCE_SERVERS)
    roots = [directory.resolve() for directory in fs_roots] or [Path.cwd().resolve()]
    new_entries = entries(chosen, fs_roots=roots, provider=provider)
    path = config_path(client, project, override)
    if not write:
        print(json.dumps({"mcpServers": new_entries}, indent=2, ensure_ascii=False))  # stdout-ok: the CLI's own output
        print(f"# add these to {path}, or run again with --write to merge them there "  # stdout-ok: the CLI's own output
              f"(other servers are kept; the file is backed up first)", file=sys.stderr)
        return 0
    merged = merge(load_config(path), new_entries)
    saved = backup(path)
    write_config(path, merged)
    app = "Claude Desktop" if client == "claude" else "Cursor"
    print(f"wrote {', '.join(chosen)} to {path}" + (f" (backup: {saved})" if saved else ""))  # stdout-ok: the CLI's own output
    print(f"restart {app} (or reload its MCP servers) to start them", file=sys.stderr)  # stdout-ok: the CLI's own output
    return 0

"""`mcp-kit config claude|cursor`: the entries that start the reference servers from Claude Desktop or Cursor.

Those clients start servers without the shell's PATH and without honouring a working directory,
so each entry names the venv's interpreter by absolute path and sets `cwd` and `PYTHONPATH` to the
repository root, in the running system's form (`client_paths.py`). The filesystem server is
configured only for the roots the user names. Writing merges into the existing file: other servers
are kept, replaced entries are named, the file is backed up first, and a file that is not valid
JSON is left alone.

Imports only the standard library and the command helpers; nothing of the server side.
"""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from .client_paths import System
from .exit_codes import CommandError

REFERENCE_SERVERS = ("stock", "weather", "filesystem")
CLIENTS = ("claude", "cursor")


def repo_root() -> Path:
    """The directory that contains the `servers` package."""
    spec = importlib.util.find_spec("servers")
    if spec is None or not spec.submodule_search_locations:
        raise CommandError("the reference servers (package 'servers') are not importable from this interpreter")
    return Path(next(iter(spec.submodule_search_locations))).resolve().parent


def code_directories(root: Path, system: System) -> list[Path]:
    """What PYTHONPATH needs: the repository, and mcp_kit's own checkout when it is elsewhere (not installed)."""
    kit = Path(__file__).resolve().parents[2]
    installed = kit.is_relative_to(Path(system.prefix).resolve())
    return [root] if kit == root or installed else [root, kit]


def server_entry(name: str, *, system: System, python: str | PurePath, root: str | PurePath,
                 pythonpath: list[str | PurePath], fs_roots: list[str | PurePath], provider: str | None
                 ) -> dict[str, Any]:
    """One `mcpServers` entry: `python -m servers.NAME ...` with cwd and PYTHONPATH at the repo root."""
    args = ["-m", f"servers.{name}"]
    if name == "filesystem":
        for directory in fs_roots:
            args += ["--root", str(system.path(directory))]
    elif provider:
        args += ["--provider", provider]
    return {"command": str(system.path(python)), "args": args, "cwd": str(system.path(root)),
            "env": {"PYTHONPATH": system.search_path(pythonpath)}}


def entries(names: list[str], *, system: System, python: str | PurePath, root: str | PurePath,
            pythonpath: list[str | PurePath] | None = None, fs_roots: list[str | PurePath],
            provider: str | None) -> dict[str, dict[str, Any]]:
    """The entries for `names`, as `mcp-kit config` writes them on `system` (a pure function)."""
    path = pythonpath if pythonpath is not None else [root]
    return {name: server_entry(name, system=system, python=python, root=root, pythonpath=path,
                               fs_roots=fs_roots, provider=provider) for name in names}


def local_interpreter(system: System) -> PurePath:
    """The venv's `python` when it exists (however mcp-kit was started), else the running interpreter."""
    preferred = system.python()
    return preferred if Path(preferred).exists() else system.path(system.executable)


@dataclass(frozen=True)
class Installation:
    """What an entry starts: this interpreter, on this checkout, with this PYTHONPATH."""

    python: PurePath
    root: PurePath
    pythonpath: list[PurePath]

    @classmethod
    def here(cls, system: System) -> Installation:
        root = repo_root()
        return cls(local_interpreter(system), root, list(code_directories(root, system)))


def claude_config_path() -> Path:
    """Claude Desktop's config file on this machine."""
    return Path(System.current().claude_config())


def cursor_config_path(project: Path | None = None) -> Path:
    """~/.cursor/mcp.json on this machine, or PROJECT/.cursor/mcp.json for one project."""
    return Path(System.current().cursor_config(project))


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
    os.chmod(target, stat.S_IMODE(path.stat().st_mode))  # a private config's backup stays private
    return target


def write_config(path: Path, config: dict[str, Any]) -> None:
    """Write JSON atomically (a temporary file, then a rename), keeping the file's mode (a new file gets the
    mode the umask gives any new file, not the temporary file's 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        mode = stat.S_IMODE(path.stat().st_mode)
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(temporary, mode)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(config, out, indent=2, ensure_ascii=False)
            out.write("\n")
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def config_path(client: str, project: Path | None, override: Path | None, system: System) -> Path:
    if override is not None:
        return override
    if client == "claude":
        if project is not None:
            raise CommandError("--project applies to cursor only (Claude Desktop has one config file)")
        return Path(str(system.claude_config()))
    return Path(str(system.cursor_config(project.resolve() if project is not None else None)))


def choose_servers(names: list[str], fs_roots: list[Path]) -> tuple[list[str], str | None]:
    """The servers to configure, and a note when the filesystem server was left out for want of a root.

    The filesystem server gets read and write access to its roots, so it is configured only when
    the user names them: no default, least of all the directory mcp-kit happens to run in.
    """
    unknown = [name for name in names if name not in REFERENCE_SERVERS]
    if unknown:
        raise CommandError(f"unknown server {', '.join(unknown)}; choose from {', '.join(REFERENCE_SERVERS)}")
    chosen = list(dict.fromkeys(names))
    if "filesystem" in chosen and not fs_roots:
        raise CommandError("the filesystem server needs --root DIR: the directory (repeatable) the client may read "
                           "and write. There is no default; name the one you mean, e.g. --root ~/Documents")
    if chosen:
        return chosen, None
    if fs_roots:
        return list(REFERENCE_SERVERS), None
    return [name for name in REFERENCE_SERVERS if name != "filesystem"], (
        "filesystem left out: add --root DIR (repeatable) to name the directories it may read and write")


def checked_roots(fs_roots: list[Path]) -> list[Path]:
    """The roots as absolute paths (`~` expanded), each an existing directory."""
    roots = []
    for given in fs_roots:
        directory = given.expanduser().resolve()
        if not directory.is_dir():
            raise CommandError(f"--root {given}: not a directory (create it first, or name another)")
        roots.append(directory)
    return roots


def changes(existing: dict[str, Any], new_entries: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """Which of `new_entries` are added, which replace a different entry, which are already there."""
    current = existing.get("mcpServers", {})
    found: dict[str, list[str]] = {"added": [], "replaced": [], "unchanged": []}
    for name, entry in new_entries.items():
        kind = "added" if name not in current else "unchanged" if current[name] == entry else "replaced"
        found[kind].append(name)
    return found


def command_line(entry: Any) -> str:
    """How an existing entry starts its server, for the message that says it was replaced."""
    if not isinstance(entry, dict):
        return json.dumps(entry)
    if "url" in entry:
        return str(entry["url"])
    return " ".join(str(part) for part in [entry.get("command", "?"), *entry.get("args", [])])


def config_command(client: str, names: list[str], *, write: bool, project: Path | None, override: Path | None,
                   fs_roots: list[Path], provider: str | None, system: System | None = None,
                   installation: Installation | None = None) -> int:
    """Print the entries, or merge them into the client's config file (`system` and `installation`
    default to this machine's)."""
    chosen, left_out = choose_servers(names, fs_roots)
    roots = checked_roots(fs_roots) if "filesystem" in chosen else []
    system = system or System.current()
    installation = installation or Installation.here(system)
    new_entries = entries(chosen, system=system, python=installation.python, root=installation.root,
                          pythonpath=list(installation.pythonpath), fs_roots=list(roots), provider=provider)
    path = config_path(client, project, override, system)
    notes = [left_out] if left_out else []
    if fs_roots and not roots:
        notes.append("--root ignored: it applies to the filesystem server, which is not among the servers named")
    if roots:
        notes.append(f"filesystem may read and write under {', '.join(map(str, roots))} (and nothing else)")
    if not write:
        print(json.dumps({"mcpServers": new_entries}, indent=2, ensure_ascii=False))  # stdout-ok: the CLI's own output
        for note in notes:
            _tell(f"# {note}")
        _tell(f"# add these to {path}, or run again with --write to merge them there "
              "(other servers are kept; the file is backed up first)")
        return 0
    existing = load_config(path)
    found = changes(existing, new_entries)
    if not found["added"] and not found["replaced"]:
        print(f"{path} already has these entries ({', '.join(chosen)}); nothing written")  # stdout-ok: CLI output
        return 0
    saved = backup(path)
    write_config(path, merge(existing, new_entries))
    app = "Claude Desktop" if client == "claude" else "Cursor"
    written = f"wrote {', '.join(chosen)} to {path}" + (f" (backup: {saved})" if saved else "")
    print(written)  # stdout-ok: the CLI's own output
    for name in found["replaced"]:
        _tell(f"replaced the existing \"{name}\" entry, which started: "
              f"{command_line(existing['mcpServers'][name])} (the backup keeps it)")
    for note in notes:
        _tell(note)
    _tell(f"restart {app} (or reload its MCP servers) to start them")
    return 0


def _tell(message: str) -> None:
    """A note for the person at the terminal: stderr, so that stdout carries only the entries themselves."""
    sys.stderr.write(message + "\n")

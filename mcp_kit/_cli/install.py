"""`mcp-kit install CLIENT TARGET`: an entry that starts any server, merged into any client's config.

TARGET is a script (`calculator.py`, `calculator.py:app`), a module with its server (`pkg.mod:app`,
`pkg.mod`), a package's own command line (`-m servers.stock`), a reference server (`stock`, `weather`,
`filesystem`) or a remote server's `http(s)://` URL. A local entry names this environment's
interpreter by absolute path (never `python` off a PATH the client does not have), the script by
absolute path, the directories the code needs on PYTHONPATH, and the working directory where the
client honours one: a desktop client starts it from `/` with no venv activated. A URL becomes the
client's own remote entry, or, for a client whose file cannot name one (Claude Desktop), a stdio
entry that runs `mcp-kit proxy URL`.

Writing merges into the existing file (other entries and settings untouched, the file's mode kept),
after a backup; `--dry-run` prints the entry instead. Imports only the standard library and the
command helpers; nothing of the server side.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import urlsplit

from .client_config import (
    REFERENCE_SERVERS,
    backup,
    checked_roots,
    command_line,
    local_interpreter,
    repo_root,
    write_config,
)
from .client_paths import System
from .clients import Client, client_named
from .exit_codes import CommandError

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class Launch:
    """What a local entry starts (paths already in the target system's form)."""

    name: str
    command: str
    args: list[str]
    cwd: str | None
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Remote:
    """A remote server."""

    name: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def sse(self) -> bool:
        return urlsplit(self.url).path.rstrip("/").endswith("/sse")


@dataclass(frozen=True)
class Interpreter:
    """The facts an entry is built from: the interpreter, and mcp_kit's checkout when it is not installed."""

    python: PurePath
    kit: tuple[PurePath, ...]  # what PYTHONPATH needs for `import mcp_kit` (empty when it is installed)

    @classmethod
    def here(cls, system: System) -> Interpreter:
        kit = Path(__file__).resolve().parents[2]
        installed = kit.is_relative_to(Path(system.prefix).resolve())
        return cls(local_interpreter(system), () if installed else (system.path(str(kit)),))


def server_name(text: str) -> str:
    """A default entry name: letters, digits, `-` and `_` only."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")
    return cleaned or "server"


def parse_env(pairs: Sequence[str]) -> dict[str, str]:
    """`--env KEY=VALUE` options as a dict (a bad one is a usage error)."""
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not ENV_NAME.match(key):
            raise ValueError(f"--env expects KEY=VALUE with KEY a variable name, got {pair!r}")
        env[key] = value
    return env


def parse_headers(pairs: Sequence[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"--header expects 'NAME: VALUE', got {pair!r}")
        headers[name.strip()] = value.strip()
    return headers


def _module_root(module: str, search_from: Path) -> Path:
    """The directory to put on PYTHONPATH for `import module` (that holds its top-level package)."""
    top = module.split(".")[0]
    if str(search_from) not in sys.path:
        sys.path.insert(0, str(search_from))
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None or (spec.origin in (None, "built-in", "frozen") and not spec.submodule_search_locations):
        raise CommandError(f"no module named {module!r} here (run mcp-kit install from the directory that contains "
                           f"it, or give the path of its .py file)")
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).resolve().parent
    return Path(str(spec.origin)).resolve().parent


def _split_script(target: str) -> tuple[str, str | None]:
    """`app.py:server` -> ("app.py", "server"); a Windows drive colon is no separator."""
    path, sep, attr = target.rpartition(":")
    if sep and path.endswith(".py") and re.match(r"^[A-Za-z_][\w.]*$", attr):
        return path, attr
    return target, None


def resolve_target(target: str | None, *, module: str | None, server_args: Sequence[str], system: System,
                   interpreter: Interpreter, name: str | None = None, env: Mapping[str, str] | None = None,
                   headers: Mapping[str, str] | None = None, fs_roots: Sequence[PurePath] = (),
                   provider: str | None = None, here: Path | None = None, dev: bool = False) -> Launch | Remote:
    """What TARGET (or `-m MODULE`) starts, as the entry will name it on `system` (with `dev`: under
    `mcp-kit dev`, which restarts it on every saved change)."""
    here = here or Path.cwd()
    extra = dict(env or {})
    python = str(system.path(interpreter.python))
    kit = list(interpreter.kit)

    def runner(spec: list[str]) -> list[str]:
        """`-m mcp_kit run SPEC ARGS`, or under `dev`: `-m mcp_kit dev SPEC -- ARGS`."""
        if not dev:
            return ["-m", "mcp_kit", "run", *spec, *server_args]
        return ["-m", "mcp_kit", "dev", *spec, *(["--", *server_args] if server_args else [])]

    def launch(default_name: str, args: list[str], root: PurePath, code: list[PurePath]) -> Launch:
        variables = {"PYTHONPATH": system.search_path([*code, *kit])} if [*code, *kit] else {}
        return Launch(name or default_name, python, args, str(system.path(root)), {**variables, **extra})

    if module is not None:
        if target is not None:
            raise ValueError("give either TARGET or -m MODULE, not both")
        root = _module_root(module, here)
        args = runner(["-m", module]) if dev else ["-m", module, *server_args]
        return launch(server_name(module.rsplit(".", 1)[-1]), args, root, [root])
    if target is None:
        raise ValueError("name the server: a script, module[:app], -m package.module, a URL or a reference server")
    if target.startswith(("http://", "https://")):
        if server_args or dev:
            raise ValueError("arguments after the URL (and --dev) mean nothing to a remote server")
        return Remote(name or server_name(urlsplit(target).hostname or "remote"), target, dict(headers or {}))
    script, attr = _split_script(target)
    if script.endswith(".py") or os.sep in script or "/" in script:
        path = (here / script).resolve()
        if not path.is_file():
            raise CommandError(f"no such file: {script}")
        spec = str(system.path(str(path))) + (f":{attr}" if attr else "")
        return launch(server_name(path.stem), runner([spec]), path.parent, [path.parent])
    if target in REFERENCE_SERVERS and not (here / target).exists():
        if dev:
            raise ValueError("--dev is for your own server; a reference server is installed as it is")
        args = ["-m", f"servers.{target}"]
        for directory in fs_roots:
            args += ["--root", str(system.path(directory))]
        if provider and target != "filesystem":
            args += ["--provider", provider]
        if target == "filesystem" and not fs_roots:
            raise CommandError("the filesystem server needs --root DIR: the directory (repeatable) the client may "
                               "read and write. There is no default; name the one you mean, e.g. --root ~/Documents")
        root = repo_root()
        return launch(target, [*args, *server_args], system.path(str(root)), [system.path(str(root))])
    dotted = target.split(":", 1)[0]
    root = _module_root(dotted, here)
    return launch(server_name(dotted.rsplit(".", 1)[-1]), runner([target]), root, [system.path(str(root))])


def proxy_launch(remote: Remote, system: System, interpreter: Interpreter) -> Launch:
    """A stdio entry for a client that cannot speak HTTP itself: `mcp-kit proxy URL` bridges to it."""
    args = ["-m", "mcp_kit", "proxy", remote.url]
    for header, value in remote.headers.items():
        args += ["--header", f"{header}: {value}"]
    env = {"PYTHONPATH": system.search_path(interpreter.kit)} if interpreter.kit else {}
    return Launch(remote.name, str(system.path(interpreter.python)), args, None, env)


def client_entry(client: Client, server: Launch | Remote, system: System,
                 interpreter: Interpreter) -> tuple[dict[str, Any], list[str]]:
    """The entry in `client`'s format, and notes for the user."""
    notes: list[str] = []
    if isinstance(server, Remote):
        if client.remote is not None:
            return client.remote(server.url, server.headers, server.sse), notes
        notes.append(f"{client.title} cannot name a remote server in its config file: the entry runs "
                     f"`mcp-kit proxy {server.url}`, which speaks stdio to {client.title} and HTTP to the server")
        server = proxy_launch(server, system, interpreter)
    return client.stdio_entry(server.command, server.args, server.env, server.cwd), notes


# ---------------------------------------------------------------------------- the file


def read_config(path: Path, container: str) -> dict[str, Any]:
    """The existing config (empty when there is none); refuses anything this command should not rewrite."""
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CommandError(f"{path} is not plain JSON ({exc}; comments and trailing commas count), so it is left "
                           f"as it is. Add the entry printed by --dry-run by hand, or fix the file.", code=1) from None
    if not isinstance(data, dict) or not isinstance(data.get(container, {}), dict):
        raise CommandError(f"{path} does not look like this client's config (expected an object with a "
                           f"\"{container}\" object); nothing was written.", code=1)
    return data


def merged(config: Mapping[str, Any], container: str, name: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """`config` with `entry` under `container[name]`; every other key and entry kept in order."""
    result = dict(config)
    result[container] = {**config.get(container, {}), name: dict(entry)}
    return result


@dataclass
class InstallOptions:
    client: str
    target: str | None
    module: str | None = None
    server_args: list[str] = field(default_factory=list)
    name: str | None = None
    env: list[str] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    project: Path | None = None
    config_path: Path | None = None
    dry_run: bool = False
    fs_roots: list[Path] = field(default_factory=list)
    provider: str | None = None
    dev: bool = False
    rerun: str = "run again without --dry-run"  # how the user writes what a dry run printed


def install_command(options: InstallOptions, *, system: System | None = None,
                    interpreter: Interpreter | None = None) -> int:
    """Print the entry (--dry-run), or merge it into the client's config file."""
    client = client_named(options.client)
    system = system or System.current()
    interpreter = interpreter or Interpreter.here(system)
    roots = checked_roots(options.fs_roots) if options.fs_roots else []
    server = resolve_target(options.target, module=options.module, server_args=options.server_args, system=system,
                            interpreter=interpreter, name=options.name, env=parse_env(options.env),
                            headers=parse_headers(options.headers), fs_roots=[system.path(str(r)) for r in roots],
                            provider=options.provider, dev=options.dev)
    if isinstance(server, Remote) and options.env:
        raise ValueError("--env applies to a local server; a remote server takes --header")
    entry, notes = client_entry(client, server, system, interpreter)
    if options.config_path is not None:
        path = options.config_path
    else:
        project = options.project
        if project is None and client.user_config is None:
            project = Path.cwd()
        path = Path(str(client.config_path(system, project.resolve() if project is not None else None)))
    block = {client.container: {server.name: entry}}
    if options.dry_run:
        print(json.dumps(block, indent=2, ensure_ascii=False))  # stdout-ok: the CLI's own output
        for note in notes:
            _tell(f"# {note}")
        _tell(f"# {options.rerun} to merge this into {path} (other entries are kept; the file is backed up first)")
        return 0
    existing = read_config(path, client.container)
    previous = existing.get(client.container, {}).get(server.name)
    if previous == entry:
        print(f"{path} already has this \"{server.name}\" entry; nothing written")  # stdout-ok: CLI output
        return 0
    saved = backup(path)
    write_config(path, merged(existing, client.container, server.name, entry))
    print(f"wrote \"{server.name}\" to {path}" + (f" (backup: {saved})" if saved else ""))  # stdout-ok: CLI output
    if previous is not None:
        _tell(f"replaced the existing \"{server.name}\" entry, which started: {command_line(previous)} "
              f"(the backup keeps it)")
    for note in notes:
        _tell(note)
    _tell(client.restart)
    return 0


def _tell(message: str) -> None:
    sys.stderr.write(message + "\n")


def add_install_arguments(commands: Any) -> None:
    """The `install` subcommand's arguments (`commands` is the parser's subparsers object)."""
    from .clients import CLIENTS

    install = commands.add_parser(
        "install", help="connect a server (yours, a reference server or a URL) to an MCP client",
        description="Merge an entry that starts TARGET into CLIENT's config file: the interpreter and script by "
                    "absolute path, PYTHONPATH and (where the client honours it) the working directory, so that a "
                    "client started from a desktop launcher finds everything. Other entries are kept, the file is "
                    "backed up first and keeps its mode. Arguments after `--` go to the server.",
        epilog="TARGET: path/to/server.py[:ATTR], package.module[:ATTR], a reference server "
               f"({', '.join(REFERENCE_SERVERS)}), or an http(s):// URL; or -m package.module for a package with "
               "a command line of its own (python -m package.module).")
    install.add_argument("client", metavar="CLIENT", help=f"one of {', '.join(CLIENTS)}")
    install.add_argument("target", nargs="?", metavar="TARGET", help="the server (see below)")
    install.add_argument("-m", "--module", metavar="MODULE", help="run `python -m MODULE` (the package's own CLI)")
    install.add_argument("--name", help="the entry's name (default: from TARGET)")
    install.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                         help="an environment variable for the server (repeatable)")
    install.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                         help="an HTTP header for a remote server (repeatable)")
    install.add_argument("--project", type=Path, metavar="DIR",
                         help="write the project's config in DIR (.mcp.json, .cursor/mcp.json, .vscode/mcp.json, "
                              ".gemini/settings.json, mcp.json) instead of the user's")
    install.add_argument("--config-path", type=Path, metavar="FILE", help="write this file instead")
    install.add_argument("--dry-run", action="store_true", help="print the entry; write nothing")
    install.add_argument("--dev", action="store_true",
                         help="run it under `mcp-kit dev`: restarted on every saved change, the session kept")
    install.add_argument("--root", type=Path, action="append", default=[], metavar="DIR",
                         help="filesystem server: a directory it may read and write (repeatable)")
    install.add_argument("--provider", choices=["live", "sample"], help="stock and weather: the data provider")


def run_install_command(args: Any) -> int:
    return install_command(InstallOptions(
        client=args.client, target=args.target, module=args.module, server_args=list(args.server_args),
        name=args.name, env=args.env, headers=args.header, project=args.project, config_path=args.config_path,
        dry_run=args.dry_run, fs_roots=args.root, provider=args.provider, dev=args.dev))

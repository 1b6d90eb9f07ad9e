"""`mcp-kit run MODULE_OR_PATH[:ATTR]`: find the MCPServer in a module or a .py file.

Without `:ATTR` the server is the module's `app`, `server` or `mcp`; else what a factory without
required arguments (`build_server`, `create_server`, `create_app`, `make_server`) returns; else
the only MCPServer the module defines. `ATTR` may name a server or such a factory.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from .._serving.server import MCPServer
from .exit_codes import CONNECTION_ERROR, CommandError

T = TypeVar("T")

SERVER_NAMES = ("app", "server", "mcp")
FACTORY_NAMES = ("build_server", "create_server", "create_app", "make_server")
ATTRIBUTE = re.compile(r"^[A-Za-z_][\w.]*$")


def user_traceback(exc: BaseException) -> str:
    """The traceback of an error raised by the user's code, as Python would show it for `python FILE`:
    without the frames of this loader and of importlib (a SyntaxError shows only its file, line and caret)."""
    ours = os.path.abspath(__file__)
    machinery = os.path.dirname(os.path.abspath(importlib.__file__ or ""))
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__)
              if not frame.filename.startswith("<frozen importlib")
              and os.path.dirname(os.path.abspath(frame.filename)) != machinery]
    while frames and os.path.abspath(frames[0].filename) == ours:
        frames.pop(0)
    shown = ["Traceback (most recent call last):\n", *traceback.format_list(frames)] if frames else []
    return "".join(shown + traceback.format_exception_only(type(exc), exc)).rstrip("\n")


def run_user_code(call: Callable[[], T], what: str) -> T:
    """`call()`, which runs the user's code; its failure becomes a CommandError showing only the user's traceback."""
    try:
        return call()
    except CommandError:
        raise
    except Exception as exc:
        raise CommandError(f"{what} failed:\n{user_traceback(exc)}", code=CONNECTION_ERROR) from None


def split_spec(spec: str) -> tuple[str, str | None]:
    """`pkg.mod:app` -> ("pkg.mod", "app"); a Windows drive colon is not a separator."""
    target, sep, attr = spec.rpartition(":")
    if sep and target and ATTRIBUTE.match(attr):
        return target, attr
    return spec, None


def import_target(target: str) -> ModuleType:
    """Import a dotted module name (from the current directory too) or a .py file."""
    path = Path(target)
    if target.endswith(".py") or os.sep in target or "/" in target:
        if not path.is_file():
            raise CommandError(f"no such file: {target}")
        return _import_file(path.resolve())
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return run_user_code(lambda: importlib.import_module(target), f"importing {target}")
    except CommandError as exc:
        cause = exc.__context__
        if isinstance(cause, ModuleNotFoundError) and cause.name and target.startswith(cause.name):
            raise CommandError(f"no module named {target!r} (run mcp-kit from the directory that contains it, "
                               f"or give the path of the .py file)") from None
        raise


def _import_file(path: Path) -> ModuleType:
    sys.path.insert(0, str(path.parent))  # so the file can import its neighbours
    name = path.stem if path.stem.isidentifier() else "mcp_kit_app"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CommandError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader = spec.loader
    run_user_code(lambda: loader.exec_module(module), f"importing {path.name}")
    return module


def load_server(spec: str) -> MCPServer:
    """The MCPServer that `spec` (MODULE_OR_PATH[:ATTR]) designates."""
    target, attr = split_spec(spec)
    module = import_target(target)
    if attr is not None:
        obj: Any = module
        for part in attr.split("."):
            if not hasattr(obj, part):
                raise CommandError(f"{target} has no attribute {attr!r}")
            obj = getattr(obj, part)
        return _as_server(obj, f"{target}:{attr}")
    for name in SERVER_NAMES:
        if isinstance(getattr(module, name, None), MCPServer):
            return getattr(module, name)
    for name in FACTORY_NAMES:
        factory = getattr(module, name, None)
        if callable(factory) and not _required_parameters(factory):
            return _as_server(factory, f"{target}:{name}")
    servers = [value for value in vars(module).values() if isinstance(value, MCPServer)]
    if len(servers) == 1:
        return servers[0]
    raise CommandError(_not_found_message(target, module))


def _as_server(obj: Any, label: str) -> MCPServer:
    if isinstance(obj, MCPServer):
        return obj
    if callable(obj):
        missing = _required_parameters(obj)
        if missing:
            raise CommandError(f"{label} needs arguments ({', '.join(missing)}); name an MCPServer or a factory "
                               f"that takes none")
        made = run_user_code(obj, f"{label}()")
        if isinstance(made, MCPServer):
            return made
        raise CommandError(f"{label}() returned {type(made).__name__}, not an MCPServer")
    raise CommandError(f"{label} is a {type(obj).__name__}, not an MCPServer")


def _required_parameters(func: Any) -> list[str]:
    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _not_found_message(target: str, module: ModuleType) -> str:
    hint = ""
    if getattr(module, "__path__", None) is not None and importlib.util.find_spec(f"{target}.__main__") is not None:
        hint = f"; it has a command line of its own: python -m {target} --help"
    needy = [f"{name}() needs {', '.join(_required_parameters(getattr(module, name)))}"
             for name in FACTORY_NAMES if callable(getattr(module, name, None))]
    if needy:
        hint += "; " + "; ".join(needy)
    looked = ", ".join(SERVER_NAMES) + "; a factory without arguments: " + ", ".join(FACTORY_NAMES)
    return (f"no MCPServer found in {target} (looked for {looked}). Name it: mcp-kit run {target}:ATTR{hint}")

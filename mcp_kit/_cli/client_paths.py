"""Where Claude Desktop and Cursor keep their MCP config, and how an entry names Python, on each system.

Pure functions of a `System` (platform, environment, interpreter facts), so Windows and macOS are
tested on any machine: paths are built with the target system's path flavour (`PureWindowsPath`
with backslashes on Windows), never the host's.

Imports only the standard library; knows nothing of MCP or of the config files' content.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath


@dataclass(frozen=True)
class System:
    """The facts that decide the paths: `sys.platform`, the environment, and the running interpreter."""

    platform: str  # "win32", "darwin", "linux", ...
    environ: Mapping[str, str]
    executable: str  # sys.executable
    prefix: str  # sys.prefix: the virtual environment when one is active
    base_prefix: str  # sys.base_prefix: the installation the venv was made from

    @classmethod
    def current(cls) -> System:
        return cls(sys.platform, os.environ, sys.executable, sys.prefix, sys.base_prefix)

    @property
    def windows(self) -> bool:
        return self.platform == "win32"

    def path(self, first: str | PurePath, *rest: str) -> PurePath:
        """A path in this system's flavour."""
        flavour: type[PurePath] = PureWindowsPath if self.windows else PurePosixPath
        return flavour(first, *rest)

    def home(self) -> PurePath:
        """The user's home: %USERPROFILE% on Windows, $HOME elsewhere."""
        env = self.environ
        if self.windows:
            found = env.get("USERPROFILE") or (env.get("HOMEDRIVE", "") + env.get("HOMEPATH", ""))
        else:
            found = env.get("HOME", "")
        return self.path(found) if found else self.path(str(Path.home()))

    def claude_config(self) -> PurePath:
        """Claude Desktop's claude_desktop_config.json."""
        if self.windows:
            appdata = self.environ.get("APPDATA")
            base = self.path(appdata) if appdata else self.home() / "AppData" / "Roaming"
        elif self.platform == "darwin":
            base = self.home() / "Library" / "Application Support"
        else:  # Linux and other Unix: the XDG base directory (a relative value is invalid, per the spec)
            xdg = self.environ.get("XDG_CONFIG_HOME", "")
            base = self.path(xdg) if xdg and self.path(xdg).is_absolute() else self.home() / ".config"
        return base / "Claude" / "claude_desktop_config.json"

    def cursor_config(self, project: PurePath | None = None) -> PurePath:
        """Cursor's per-user ~/.cursor/mcp.json (%USERPROFILE%\\.cursor\\mcp.json), or PROJECT/.cursor/mcp.json."""
        return (project if project is not None else self.home()) / ".cursor" / "mcp.json"

    def python(self) -> PurePath:
        """The interpreter a config entry should name: the active venv's `python` (`Scripts\\python.exe` on
        Windows) whatever alias started us, else the running executable."""
        if self.prefix != self.base_prefix:
            venv = self.path(self.prefix)
            return venv / "Scripts" / "python.exe" if self.windows else venv / "bin" / "python"
        return self.path(self.executable)

    def search_path(self, directories: Iterable[str | PurePath]) -> str:
        """Directories joined as PYTHONPATH wants them here (`;` on Windows, `:` elsewhere), duplicates dropped."""
        unique = dict.fromkeys(str(self.path(directory)) for directory in directories)
        return (";" if self.windows else ":").join(unique)

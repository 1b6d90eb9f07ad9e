"""The platform seam: the file-system primitives of this system, chosen once at import.

POSIX systems get directory descriptors (`posix.py`); Windows, which has no `dir_fd`, gets
directory handles that pin every directory on the way and checks the final path of every
handle it opens (`windows.py`). Both offer the same `Directory` (see `base.py`); the path
rules only Windows paths can break are pure functions in `winpaths.py`, importable and
tested everywhere.

Must not import the sandbox or the operations.
"""

from __future__ import annotations

import sys

from .base import Directory, EntryRefused, LinkEncountered, NotRegularFile, is_link_entry, is_link_mode

if sys.platform == "win32":
    from .windows import FOLLOWS_LINKS, keep_owner, open_root, set_mode
else:
    from .posix import FOLLOWS_LINKS, keep_owner, open_root, set_mode

IS_WINDOWS = sys.platform == "win32"

__all__ = [
    "FOLLOWS_LINKS",
    "IS_WINDOWS",
    "Directory",
    "EntryRefused",
    "LinkEncountered",
    "NotRegularFile",
    "is_link_entry",
    "is_link_mode",
    "keep_owner",
    "open_root",
    "set_mode",
]

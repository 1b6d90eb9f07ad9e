"""File operations used by the filesystem server's tools and resources.

Every function takes paths that already passed the sandbox (`SandboxedPath`)
and is synchronous; the server runs them in worker threads.
"""

from .editing import Edit, EditError, EditPlan, fenced, plan_edits
from .opening import lstat_existing
from .reading import BinaryFileError, TextRead, decode_utf8, file_info, guess_mime_type, read_bytes, read_text
from .walking import Cancellation, Entry, Walk, WalkCancelled, directory_tree, list_directory, search
from .writing import atomic_write, create_directory, move

__all__ = [
    "BinaryFileError",
    "Cancellation",
    "Edit",
    "EditError",
    "EditPlan",
    "Entry",
    "TextRead",
    "Walk",
    "WalkCancelled",
    "atomic_write",
    "create_directory",
    "decode_utf8",
    "directory_tree",
    "fenced",
    "file_info",
    "guess_mime_type",
    "list_directory",
    "lstat_existing",
    "move",
    "plan_edits",
    "read_bytes",
    "read_text",
    "search",
]

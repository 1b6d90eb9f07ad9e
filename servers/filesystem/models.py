"""Argument and result models of the filesystem tools (their JSON Schemas are what clients see)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

PathArg = Annotated[str, Field(description=(
    "Path of the file or directory (absolute, or relative to an allowed directory). A name that is not valid "
    "UTF-8 or contains a control character or a backslash is written as results show it: escaped, e.g. bad\\xff.txt"
))]
Excludes = Annotated[
    list[str], Field(description="Glob patterns of entries to leave out, e.g. node_modules or **/*.log")
]


class EditOperation(BaseModel):
    """One replacement in edit_file."""

    oldText: str = Field(description="Text to find; it must occur exactly once (whitespace differences are tolerated)")
    newText: str = Field(description="Text to put in its place")


class TreeNode(BaseModel):
    """One entry of a directory tree."""

    name: str
    type: Literal["file", "directory"]
    children: list[TreeNode] | None = Field(default=None, description="Entries of a directory (absent for files)")
    symlink: bool | None = Field(default=None, description="True for a linked directory, which is not descended into")
    truncated: bool | None = Field(
        default=None, description="True when this directory's entries are not shown (too deep)"
    )


class DirectoryTree(BaseModel):
    """The tree below a directory."""

    path: str = Field(description="The directory the tree starts at")
    tree: list[TreeNode]
    truncated: bool = Field(description="True when the tree is incomplete (entry, visit or depth limit); see note")
    note: str | None = Field(default=None, description="Why the result is incomplete, if it is")


class SearchResult(BaseModel):
    """Paths matching a search_files pattern."""

    matches: list[str] = Field(description="Absolute paths of matching files and directories")
    truncated: bool = Field(description="True when the search stopped early (entry or visit limit)")
    note: str | None = Field(default=None, description="Why the result is incomplete, if it is")


class FileInfo(BaseModel):
    """Metadata of a file or directory."""

    path: str
    type: str = Field(description="regular file, directory, symbolic link, FIFO (named pipe), ...")
    size: int = Field(description="Size in bytes")
    created: str = Field(
        description="Creation time (birth time where the system records it, else status change), ISO 8601"
    )
    modified: str = Field(description="Last modification time, ISO 8601")
    accessed: str = Field(description="Last access time, ISO 8601")
    isDirectory: bool
    isFile: bool
    permissions: str = Field(description="Permission bits in octal, e.g. 644")


class AllowedDirectories(BaseModel):
    """The directories this session may access."""

    directories: list[str]
    note: str | None = None


class WriteConfirmation(BaseModel):
    """What the user is asked before a change when --confirm-writes is on."""

    confirm: bool = Field(default=False, description="Allow this change")


TreeNode.model_rebuild()

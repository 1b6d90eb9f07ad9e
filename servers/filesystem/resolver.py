"""Walking a path from an allowed directory, one component at a time, on open handles.

The walk starts from a fresh handle on the allowed directory and opens each component with
`open_directory`, which never follows a link. When a component is a link (and the platform
follows links at all: POSIX does, Windows refuses them), the walk reads the link itself and
continues with its target: a relative target from the directory holding the link, an
absolute one from the allowed directory that contains it. `..` steps back to the directory
the walk came from, and stepping above the allowed directory is an escape. A component
swapped for a link between looking at it and opening it is simply looked at again, so
whatever the race, every directory the walk holds was reached from the allowed directory
without leaving it.

The walk returns a `Location`: the open directories and what is left of the path (the
final name, or the names that do not exist yet). Operations act on `Location.directory`.

Must not import the sandbox or the operations.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from collections.abc import Sequence
from types import TracebackType

from . import native
from .anchors import Anchor, anchor_of, split_components
from .errors import AccessDenied, FilesystemError

MAX_LINK_HOPS = 40


class Escape(AccessDenied):
    """A link (or `..` in its target) leads outside the allowed directories."""


class Location:
    """Where a walk ended: the directories it holds open, and the components left to act on.

    `rest == ()`: the target is `directory` itself. `rest == (name,)`: the target is the entry
    `name` of `directory` (which may not exist yet). Longer: `rest[0]` does not exist, so
    neither do the directories the remaining names would be in.
    """

    def __init__(self, chain: list[native.Directory], rest: tuple[str, ...], created: bool = False) -> None:
        self.chain = chain
        self.rest = rest
        self.created = created

    @property
    def directory(self) -> native.Directory:
        return self.chain[-1]

    @property
    def name(self) -> str | None:
        """The final entry's name, when the target is an entry of `directory`."""
        return self.rest[0] if len(self.rest) == 1 else None

    @property
    def parents_missing(self) -> bool:
        return len(self.rest) > 1

    @property
    def path(self) -> str:
        """Where the target is, by real path (for results and messages)."""
        return os.path.join(self.directory.path, *self.rest) if self.rest else self.directory.path

    def close(self) -> None:
        while self.chain:
            self.chain.pop().close()

    def __enter__(self) -> Location:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def escape_message(label: str, anchors: Sequence[Anchor]) -> str:
    allowed = ", ".join(anchor.path for anchor in anchors)
    return (f"Access denied: {label} leads through a symbolic link to a location outside the allowed "
            f"directories ({allowed}).")


def locate(
    anchor: Anchor,
    parts: Sequence[str],
    anchors: Sequence[Anchor],
    *,
    label: str,
    follow_final: bool = True,
    create: bool = False,
) -> Location:
    """Walk `parts` from `anchor`; `create` makes every missing directory on the way, the final one included."""
    chain = [anchor.open()]
    pending = deque(parts)
    hops = 0  # links followed on the whole walk
    retries = 0  # looks again at one component (it changed under us); reset on every step forward
    created = False

    def hop() -> None:
        nonlocal hops
        hops += 1
        if hops > MAX_LINK_HOPS:
            raise FilesystemError(f"{label}: too many levels of symbolic links (a loop?).")

    def retry() -> None:
        nonlocal retries
        retries += 1
        if retries > MAX_LINK_HOPS:
            raise FilesystemError(f"{label}: a directory on the way keeps changing; try again.")

    try:
        while pending:
            name = pending.popleft()
            if name in ("", "."):
                continue
            if name == "..":
                if len(chain) == 1:
                    raise Escape(escape_message(label, anchors))
                chain.pop().close()
                continue
            last = not pending
            if last and not follow_final and not create:
                return Location(chain, (name,))
            directory = chain[-1]
            try:
                st = directory.lstat(name)
            except FileNotFoundError:
                if not create:
                    return Location(chain, (name, *pending))
                try:
                    directory.make_directory(name)
                    created = True
                except FileExistsError:
                    pass  # made by someone else meanwhile: look at what it is
                retry()
                pending.appendleft(name)
                continue
            if native.is_link_mode(st):
                if not native.FOLLOWS_LINKS:
                    raise AccessDenied(f"Access denied: {label} goes through a link or junction; "
                                       "links are not followed on this system.")
                hop()
                try:
                    target = directory.readlink(name)
                except OSError as exc:
                    if exc.errno not in (errno.EINVAL, errno.ENOENT):
                        raise
                    pending.appendleft(name)  # no longer a link (or gone) since we looked: look again
                    continue
                if os.path.isabs(target):
                    found = anchor_of(os.path.realpath(target), anchors)
                    if found is None:
                        raise Escape(escape_message(label, anchors))
                    new_anchor, rest = found
                    fresh = new_anchor.open()
                    while chain:
                        chain.pop().close()
                    chain.append(fresh)
                    pending.extendleft(reversed(rest))
                else:
                    pending.extendleft(reversed(split_components(target)))
                continue
            if last and not create:
                return Location(chain, (name,))
            if not stat.S_ISDIR(st.st_mode):
                if last:
                    raise FilesystemError(f"{label} exists and is not a directory.")
                raise FilesystemError(f"A parent of {label} is not a directory.")
            try:
                chain.append(directory.open_directory(name))
                retries = 0
            except (native.LinkEncountered, FileNotFoundError):
                retry()  # replaced since we looked: look again
                pending.appendleft(name)
        return Location(chain, (), created)
    except native.EntryRefused as refused:
        while chain:
            chain.pop().close()
        raise AccessDenied(f"Access denied: {label}: {refused.reason}") from None
    except BaseException:
        while chain:
            chain.pop().close()
        raise

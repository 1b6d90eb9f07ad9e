"""The path policy as an attack table: every escape is refused, every legitimate path allowed."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from servers.filesystem.errors import AccessDenied, FilesystemError
from servers.filesystem.sandbox import Sandbox
from servers.filesystem.uris import file_uri
from tests.helpers.fs_layout import SECRET, Layout

ALLOWED = [
    ("relative file", lambda lay: "ok.txt", "ok.txt"),
    ("absolute file", lambda lay: str(lay.root / "ok.txt"), "ok.txt"),
    ("root itself", lambda lay: str(lay.root), ""),
    ("root with trailing slash", lambda lay: str(lay.root) + "/", ""),
    ("new file", lambda lay: str(lay.root / "new.txt"), "new.txt"),
    ("new nested path", lambda lay: str(lay.root / "a" / "b" / "c.txt"), "a/b/c.txt"),
    ("dot-dot staying inside", lambda lay: str(lay.root / "sub" / ".." / "ok.txt"), "ok.txt"),
    ("symlink inside the root", lambda lay: str(lay.root / "link_in"), "ok.txt"),
    ("file URI", lambda lay: file_uri(lay.root / "ok.txt"), "ok.txt"),
    ("redundant separators", lambda lay: str(lay.root) + "//sub///inner.txt", "sub/inner.txt"),
]

DENIED = [
    ("dot-dot escape (relative)", lambda lay: "../outside/secret.txt", "outside the allowed"),
    (
        "dot-dot escape (absolute)",
        lambda lay: str(lay.root / "sub" / ".." / ".." / "outside" / "secret.txt"),
        "outside",
    ),
    ("sibling prefix directory", lambda lay: str(lay.sibling), "outside the allowed"),
    ("sibling prefix file", lambda lay: str(lay.sibling / "evil.txt"), "outside the allowed"),
    ("sibling via dot-dot", lambda lay: str(lay.root / ".." / "root_evil" / "evil.txt"), "outside the allowed"),
    ("absolute outside", lambda lay: "/etc/passwd", "outside the allowed"),
    ("parent of root", lambda lay: str(lay.base), "outside the allowed"),
    ("symlink file to outside", lambda lay: str(lay.root / "link_out"), "symbolic link"),
    ("symlink parent to outside", lambda lay: str(lay.root / "linkdir_out" / "secret.txt"), "symbolic link"),
    ("new file under symlinked parent", lambda lay: str(lay.root / "linkdir_out" / "new.txt"), "symbolic link"),
    ("new dir under symlinked parent", lambda lay: str(lay.root / "linkdir_out" / "x" / "y"), "symbolic link"),
    ("dangling symlink to outside", lambda lay: str(lay.root / "dangling_out"), "symbolic link"),
    ("NUL byte", lambda lay: str(lay.root / "ok.txt") + "\x00.png", "NUL byte"),
    ("over-long path", lambda lay: str(lay.root / ("a/" * 3000)), "too long"),
    ("over-long component", lambda lay: str(lay.root / ("x" * 300)), "longer than 255 bytes"),
    ("empty path", lambda lay: "", "empty"),
    ("lone surrogate", lambda lay: str(lay.root / "a\ud800b.txt"), "lone surrogate"),
    ("escaped NUL byte", lambda lay: str(lay.root / "ok.txt\\x00"), "NUL byte"),
    ("home directory", lambda lay: "~/.bashrc", "outside the allowed"),
    ("file URI outside", lambda lay: file_uri(lay.outside / "secret.txt"), "outside the allowed"),
]


@pytest.mark.parametrize(("case", "make_path", "expected"), ALLOWED, ids=[c[0] for c in ALLOWED])
def test_allowed_paths_resolve_inside_the_root(layout: Layout, case: str, make_path, expected: str) -> None:
    resolved = Sandbox([layout.root]).resolve(make_path(layout))
    assert resolved.path == (layout.root / expected if expected else layout.root)


@pytest.mark.parametrize(("case", "make_path", "reason"), DENIED, ids=[c[0] for c in DENIED])
def test_attacks_are_refused_without_leaking_content(layout: Layout, case: str, make_path, reason: str) -> None:
    requested = make_path(layout)
    with pytest.raises(AccessDenied) as denied:
        Sandbox([layout.root]).resolve(requested)
    message = str(denied.value)
    assert reason in message
    assert SECRET not in message
    if str(layout.outside) not in requested:
        assert str(layout.outside) not in message  # where a link leads is not revealed


def test_link_entry_itself_can_be_addressed_without_following(layout: Layout) -> None:
    sandbox = Sandbox([layout.root])
    assert sandbox.resolve(str(layout.root / "link_in"), follow_final=False).path == layout.root / "link_in"
    with pytest.raises(AccessDenied):
        sandbox.resolve(str(layout.root / "link_out"), follow_final=False)


def test_root_given_through_a_symlink_is_resolved(layout: Layout) -> None:
    os.symlink(layout.root, layout.base / "alias")
    sandbox = Sandbox([layout.base / "alias"])
    assert sandbox.roots == (layout.root,)
    assert sandbox.resolve(str(layout.base / "alias" / "ok.txt")).path == layout.root / "ok.txt"
    with pytest.raises(AccessDenied):
        sandbox.resolve(str(layout.base / "alias" / ".." / "outside" / "secret.txt"))


def test_missing_root_is_rejected_at_startup(layout: Layout) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        Sandbox([layout.base / "nope"])
    with pytest.raises(ValueError, match="not a directory"):
        Sandbox([layout.root / "ok.txt"])


def test_relative_path_is_anchored_in_the_root_where_it_exists(layout: Layout, tmp_path: Path) -> None:
    second = layout.base / "second"
    second.mkdir()
    (second / "only_here.txt").write_text("x")
    sandbox = Sandbox([layout.root, second])
    assert sandbox.resolve("only_here.txt").path == second / "only_here.txt"
    assert sandbox.resolve("brand_new.txt").path == layout.root / "brand_new.txt"


def test_narrowing_keeps_client_dirs_inside_the_roots_only(layout: Layout) -> None:
    sandbox = Sandbox([layout.root])
    narrowed = sandbox.narrowed([str(layout.root / "sub")])
    assert narrowed.roots == (layout.root / "sub",)
    assert narrowed.resolve("inner.txt").path == layout.root / "sub" / "inner.txt"
    with pytest.raises(AccessDenied):
        narrowed.resolve(str(layout.root / "ok.txt"))
    assert sandbox.narrowed([str(layout.base)]).roots == (layout.root,)  # never wider than the command line


def test_narrowing_to_nothing_denies_everything(layout: Layout) -> None:
    narrowed = Sandbox([layout.root]).narrowed([str(layout.outside), str(layout.sibling), "/no/such/dir"])
    assert narrowed.roots == ()
    with pytest.raises(AccessDenied, match="no allowed directories"):
        narrowed.resolve(str(layout.root / "ok.txt"))


def test_symlink_loop_is_refused_with_a_clear_error(layout: Layout) -> None:
    os.symlink(layout.root / "loop_b", layout.root / "loop_a")
    os.symlink(layout.root / "loop_a", layout.root / "loop_b")
    with pytest.raises(FilesystemError, match="too many levels of symbolic links"):
        Sandbox([layout.root]).resolve(str(layout.root / "loop_a"))


@pytest.mark.parametrize("inner_first", [False, True])
def test_an_allowed_directory_inside_another_is_still_an_allowed_directory(layout: Layout, inner_first: bool) -> None:
    """The deepest allowed directory holding a path is its anchor, whatever order the roots come in."""
    inner = layout.root / "sub"
    sandbox = Sandbox([inner, layout.root] if inner_first else [layout.root, inner])
    itself = sandbox.resolve(str(inner))
    assert itself.is_root  # so no tool may write over it, move or delete it
    assert itself.anchor.path == str(inner)
    below = sandbox.resolve(str(inner / "inner.txt"))
    assert (below.anchor.path, below.parts) == (str(inner), ("inner.txt",))
    assert not sandbox.resolve(str(layout.root / "ok.txt")).is_root


def test_a_chain_of_links_as_long_as_the_limit_resolves_and_one_more_is_refused(layout: Layout) -> None:
    from servers.filesystem.resolver import MAX_LINK_HOPS

    chain = layout.root / "chain"
    chain.mkdir()
    (chain / "end.txt").write_text("end")
    previous = "end.txt"
    for index in range(MAX_LINK_HOPS + 1):  # link_0 -> end.txt, link_1 -> link_0, ...
        os.symlink(previous, chain / f"link_{index}")
        previous = f"link_{index}"
    sandbox = Sandbox([layout.root])
    longest = MAX_LINK_HOPS - 1  # following link_{N-1} takes N hops
    assert sandbox.resolve(str(chain / f"link_{longest}")).path == chain / "end.txt"
    with pytest.raises(FilesystemError, match="too many levels of symbolic links"):
        sandbox.resolve(str(chain / f"link_{longest + 1}"))


def test_a_relative_link_may_step_up_with_dot_dot_while_it_stays_inside(layout: Layout) -> None:
    os.symlink("../ok.txt", layout.root / "sub" / "up")
    os.symlink("../../outside/secret.txt", layout.root / "sub" / "up_out")
    sandbox = Sandbox([layout.root])
    assert sandbox.resolve(str(layout.root / "sub" / "up")).path == layout.root / "ok.txt"
    with pytest.raises(AccessDenied, match="symbolic link"):
        sandbox.resolve(str(layout.root / "sub" / "up_out"))


def test_an_absolute_link_restarts_the_walk_at_its_target(layout: Layout) -> None:
    """What the walk held before an absolute link is let go: `..` above the link's target is an escape,
    even when the path would come back inside."""
    os.symlink(str(layout.root), layout.root / "sub" / "to_root")
    os.symlink("../root/ok.txt", layout.root / "out_and_back")
    sandbox = Sandbox([layout.root])
    assert sandbox.resolve(str(layout.root / "sub" / "to_root" / "ok.txt")).path == layout.root / "ok.txt"
    with pytest.raises(AccessDenied, match="symbolic link"):
        sandbox.resolve(str(layout.root / "sub" / "to_root" / "out_and_back"))


def test_names_that_sort_next_to_dot_dot_are_ordinary_names(layout: Layout) -> None:
    """Only `..` itself steps up: `#notes`, `-x`, `...` or `..x` are names like any other."""
    names = ["#notes.txt", "-x.txt", "!bang", " lead", "...", "..x", ".-x"]
    for name in names:
        (layout.root / name).write_text(name)
        (layout.root / "sub" / name).write_text(name)
    sandbox = Sandbox([layout.root])
    for name in names:
        assert sandbox.resolve(str(layout.root / name)).path == layout.root / name
        assert sandbox.resolve(str(layout.root / "sub" / name)).path == layout.root / "sub" / name


def test_a_walk_that_creates_says_whether_it_created_anything(layout: Layout) -> None:
    sandbox = Sandbox([layout.root])
    with sandbox.resolve(str(layout.root / "sub")).locate(create=True) as existing:
        assert existing.created is False and existing.rest == ()
    with sandbox.resolve(str(layout.root / "made" / "deeper")).locate(create=True) as made:
        assert made.created is True and made.rest == ()
    assert (layout.root / "made" / "deeper").is_dir()
    with pytest.raises(FilesystemError, match="exists and is not a directory"):
        sandbox.resolve(str(layout.root / "ok.txt")).locate(create=True)
    with pytest.raises(FilesystemError, match="A parent of .* is not a directory"):
        sandbox.resolve(str(layout.root / "sub" / "inner.txt" / "below"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors through /proc")
def test_a_refused_walk_closes_every_descriptor_it_opened(layout: Layout) -> None:
    os.symlink(layout.root / "loop_b", layout.root / "loop_a")
    os.symlink(layout.root / "loop_a", layout.root / "loop_b")
    os.symlink(layout.outside, layout.root / "sub" / "out")
    sandbox = Sandbox([layout.root])
    refused = [str(layout.root / "sub" / "out" / "secret.txt"),  # escape, two directories deep
               str(layout.root / "ok.txt" / "below_a_file" / "x"),  # a parent that is not a directory
               str(layout.root / "loop_a")]  # too many links
    before = descriptors_under(layout.base)
    for _ in range(5):
        for path in refused:
            with pytest.raises(FilesystemError):
                sandbox.resolve(path)
        assert descriptors_under(layout.base) == before  # none of the layout's directories is left open


def descriptors_under(base: Path) -> list[str]:
    """What this process's open descriptors point to inside `base` (other threads' descriptors do not count)."""
    targets = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # closed meanwhile (by another thread, or the listing's own descriptor)
        if target == str(base) or target.startswith(str(base) + os.sep):
            targets.append(target)
    return sorted(targets)


def test_a_link_target_with_dot_components_is_followed_to_its_end(layout: Layout) -> None:
    os.symlink("./sub/./inner.txt", layout.root / "dotted")
    assert Sandbox([layout.root]).resolve(str(layout.root / "dotted")).path == layout.root / "sub" / "inner.txt"


@pytest.mark.skipif(sys.platform == "win32", reason="patches the POSIX descriptor layer")
def test_a_directory_removed_between_looking_and_opening_is_looked_at_again(
        layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk saw `sub` as a directory; it is gone when opened: looked at again, it is simply missing."""
    from servers.filesystem.native import posix

    opened = posix.FdDirectory.open_directory

    def racing(self: posix.FdDirectory, name: str) -> posix.FdDirectory:
        if name == "sub" and (layout.root / "sub").exists():
            (layout.root / "sub").rename(layout.base / "moved_away")  # the race, at the worst moment
        return opened(self, name)

    monkeypatch.setattr(posix.FdDirectory, "open_directory", racing)
    resolved = Sandbox([layout.root]).resolve(str(layout.root / "sub" / "inner.txt"))
    assert resolved.path == layout.root / "sub" / "inner.txt"
    assert not resolved.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="patches the POSIX descriptor layer")
def test_a_directory_made_by_someone_else_while_creating_is_used(
    layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between seeing `fresh` missing and making it, another process made it: the walk uses theirs."""
    from servers.filesystem.native import posix

    make = posix.FdDirectory.make_directory

    def racing(self: posix.FdDirectory, name: str) -> None:
        if name == "fresh":
            (layout.root / "fresh").mkdir()  # the other process wins the race
        make(self, name)

    monkeypatch.setattr(posix.FdDirectory, "make_directory", racing)
    assert not (layout.root / "fresh").exists()
    with Sandbox([layout.root]).resolve(str(layout.root / "fresh" / "mine")).locate(create=True) as made:
        assert made.rest == () and made.directory.path == str(layout.root / "fresh" / "mine")
    assert (layout.root / "fresh" / "mine").is_dir()


@pytest.mark.skipif(sys.platform == "win32", reason="patches the POSIX descriptor layer")
def test_a_link_replaced_by_a_file_before_it_is_read_is_looked_at_again(
        layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk saw `link_in` as a link; by the time it reads the link, it is a plain file: looked at again."""
    from servers.filesystem.native import posix

    read = posix.FdDirectory.readlink

    def racing(self: posix.FdDirectory, name: str) -> str:
        if name == "link_in" and (layout.root / "link_in").is_symlink():
            (layout.root / "link_in").unlink()
            (layout.root / "link_in").write_text("a file now")  # the race, at the worst moment
        return read(self, name)

    monkeypatch.setattr(posix.FdDirectory, "readlink", racing)
    resolved = Sandbox([layout.root]).resolve(str(layout.root / "link_in"))
    assert resolved.path == layout.root / "link_in"

"""The fault suite's filesystem part: adversarial globs, names and trees get bounded, clear answers.

Bounds on time here are generous on purpose: they tell "linear" from "hours", nothing finer.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_kit.testing import connect
from servers.filesystem import operations as ops
from servers.filesystem.globmatch import GlobPattern
from servers.filesystem.operations import walking
from servers.filesystem.sandbox import Sandbox
from servers.filesystem.server import build_server
from servers.filesystem.uris import file_uri
from tests.helpers.fs_layout import Layout
from tests.helpers.fs_stdio_raw import RawServer

BACKTRACKING_PATTERN = "*?" * 14 + "#"  # a backtracking engine needs minutes on a 34-character name


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in result["content"])


# ---- globs --------------------------------------------------------------------------------


def test_glob_matching_is_linear_in_the_input() -> None:
    started = time.perf_counter()
    assert GlobPattern(BACKTRACKING_PATTERN).matches("a" * 34) is False
    assert GlobPattern("*?" * 200 + "#").matches("a" * 4000) is False
    assert GlobPattern("*?" * 200 + "#").matches("a" * 4000 + "#") is True
    assert GlobPattern("{a,b,{c,d}}" * 80).matches("ab" * 40 + "cd" * 40 + "x") is False
    assert time.perf_counter() - started < 5  # backtracking would take longer than the age of the universe


@pytest.mark.timeout(60)
def test_backtracking_glob_over_stdio_answers_at_once_and_ping_too(layout: Layout) -> None:
    (layout.root / ("a" * 34)).write_text("")
    with RawServer(layout.root) as server:
        server.initialize()
        server.call(1, "search_files", {"path": str(layout.root), "pattern": BACKTRACKING_PATTERN})
        server.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert server.answer(2, timeout=20)["result"] == {}
        result = server.answer(1, timeout=20)["result"]
    assert result["isError"] is False and result["structuredContent"]["matches"] == []


def test_overlong_or_deeply_nested_patterns_are_refused_clearly(layout: Layout) -> None:
    async def run() -> tuple[str, str]:
        async with connect(build_server([layout.root])) as client:
            long = await client.call_tool("search_files", {"path": ".", "pattern": "a" * 5000})
            nested = await client.call_tool("search_files", {"path": ".", "pattern": "{" * 40 + "a" + "}" * 40})
        assert long["isError"] and nested["isError"]
        return text_of(long), text_of(nested)

    long, nested = anyio.run(run)
    assert "Invalid glob pattern" in long and "limit is 1024" in long
    assert "Invalid glob pattern" in nested and "nested" in nested


# ---- long searches: ping answered, cancellation honoured -----------------------------------


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_ping_is_answered_while_a_search_runs(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    started, release = threading.Event(), threading.Event()

    def busy_match(self: GlobPattern, relative_path: str) -> bool:
        started.set()
        deadline = time.monotonic() + 30
        while not release.is_set() and time.monotonic() < deadline:
            sum(range(1000))  # CPU work in the worker thread, holding the GIL in slices
        return False

    monkeypatch.setattr(GlobPattern, "matches", busy_match)
    async with connect(build_server([layout.root])) as client, anyio.create_task_group() as tg:
        results: list[dict[str, Any]] = []

        async def search() -> None:
            results.append(await client.call_tool("search_files", {"path": ".", "pattern": "*.py"}))

        tg.start_soon(search)
        assert await anyio.to_thread.run_sync(started.wait, 10)
        with anyio.fail_after(10):
            assert await client.request("ping") == {}
        assert not results  # the search was still running when ping was answered
        release.set()
    assert results[0]["isError"] is False


@pytest.mark.anyio
@pytest.mark.timeout(60)
@pytest.mark.parametrize(("tool", "operation", "arguments"), [
    ("search_files", "search", {"path": ".", "pattern": "*.py"}),
    ("directory_tree", "directory_tree", {"path": ".", "excludePatterns": ["*.py"]}),
])
async def test_a_cancelled_walk_stops(layout: Layout, monkeypatch: pytest.MonkeyPatch, tool: str, operation: str,
                                      arguments: dict[str, Any]) -> None:
    for n in range(3000):
        (layout.root / "sub" / f"f{n}.txt").write_text("")
    visited = 0
    ended = threading.Event()
    outcome: list[BaseException | None] = []

    def slow_match(self: GlobPattern, relative_path: str) -> bool:
        nonlocal visited
        visited += 1
        time.sleep(0.002)
        return False

    real = getattr(ops, operation)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        try:
            result = real(*args, **kwargs)
        except BaseException as exc:
            outcome.append(exc)
            raise
        else:
            outcome.append(None)
            return result
        finally:
            ended.set()

    monkeypatch.setattr(GlobPattern, "matches", slow_match)
    monkeypatch.setattr(ops, operation, recorded)
    async with connect(build_server([layout.root], max_entries=5000)) as client, anyio.create_task_group() as tg:
        tg.start_soon(client.call_tool, tool, arguments)
        with anyio.fail_after(10):
            while visited < 20:
                await anyio.sleep(0.01)
        (request_id,) = [rid for rid in client._waiting]
        await client.cancel(request_id)
        assert await anyio.to_thread.run_sync(ended.wait, 10)
        assert isinstance(outcome[0], walking.WalkCancelled), (outcome, visited)
        assert visited < 1000  # it stopped within a few entries, not after walking 3000
        with anyio.fail_after(10):
            assert await client.request("ping") == {}
        tg.cancel_scope.cancel()  # the cancelled call is never answered; stop waiting for it


# ---- names that are not valid UTF-8, control characters, backslashes -------------------------

BAD = os.fsdecode(b"bad\xff.txt")  # the name as Python sees it: a lone surrogate for the byte 0xFF


@pytest.fixture
def odd_names(layout: Layout) -> Path:
    root = bytes(layout.root)
    with open(os.path.join(root, b"bad\xff.txt"), "wb") as out:
        out.write(b"bytes in a name\n")
    os.mkdir(os.path.join(root, b"dir\xfe"))
    with open(os.path.join(root, b"dir\xfe", b"in\xfd.txt"), "wb") as out:
        out.write(b"inside\n")
    (layout.root / "new\nline.txt").write_text("a newline in the name\n")
    (layout.root / "back\\slash.txt").write_text("a backslash in the name\n")
    return layout.root


@pytest.mark.anyio
async def test_undecodable_names_are_shown_escaped_and_can_be_addressed_again(odd_names: Path) -> None:
    async with connect(build_server([odd_names])) as client:
        listing = text_of(await client.call_tool("list_directory", {"path": "."})).splitlines()
        sized = text_of(await client.call_tool("list_directory_with_sizes", {"path": "."}))
        tree = (await client.call_tool("directory_tree", {"path": "."}))["structuredContent"]
        found = (await client.call_tool("search_files", {"path": ".", "pattern": "*.txt"}))["structuredContent"]
        read = text_of(await client.call_tool("read_text_file", {"path": "bad\\xff.txt"}))
        inner = text_of(await client.call_tool("read_text_file", {"path": str(odd_names / "dir\\xfe" / "in\\xfd.txt")}))
        newline = text_of(await client.call_tool("read_text_file", {"path": "new\\x0aline.txt"}))
        backslash = text_of(await client.call_tool("read_text_file", {"path": "back\\\\slash.txt"}))
        typed = text_of(await client.call_tool("read_text_file", {"path": "back\\slash.txt"}))  # as a person types it
        info = (await client.call_tool("get_file_info", {"path": "bad\\xff.txt"}))["structuredContent"]
        written = await client.call_tool("write_file", {"path": "made\\xfe.txt", "content": "made"})
        as_directory = await client.read_resource(file_uri(odd_names))
        as_file = await client.read_resource(file_uri(odd_names / BAD))
    assert {"[FILE] bad\\xff.txt", "[DIR] dir\\xfe", "[FILE] new\\x0aline.txt", "[FILE] back\\\\slash.txt"} <= set(
        listing
    )
    assert "bad\\xff.txt" in sized
    names = {node["name"] for node in tree["tree"]}
    assert {"bad\\xff.txt", "dir\\xfe", "new\\x0aline.txt"} <= names
    assert {node["name"] for node in next(n for n in tree["tree"] if n["name"] == "dir\\xfe")["children"]} == {
        "in\\xfd.txt"
    }
    assert str(odd_names / "bad\\xff.txt") in found["matches"]
    assert str(odd_names / "dir\\xfe" / "in\\xfd.txt") in found["matches"]
    assert (read, inner, newline, backslash, typed) == ("bytes in a name\n", "inside\n", "a newline in the name\n",
                                                        "a backslash in the name\n", "a backslash in the name\n")
    assert info["path"] == str(odd_names / "bad\\xff.txt") and info["size"] == 16
    assert written["isError"] is False and (bytes(odd_names) + b"/made\xfe.txt") in [
        os.path.join(bytes(odd_names), name) for name in os.listdir(bytes(odd_names))]
    assert "[FILE] bad\\xff.txt" in as_directory[0]["text"]
    assert as_file[0]["text"] == "bytes in a name\n" and as_file[0]["uri"] == file_uri(odd_names / BAD)
    assert "%5Cxff" in as_file[0]["uri"]  # the URI carries the display form, valid UTF-8


@pytest.mark.timeout(60)
def test_undecodable_names_over_stdio_are_answered(odd_names: Path) -> None:
    """On main these calls were never answered: encoding the result failed and killed the request."""
    with RawServer(odd_names) as server:
        server.initialize()
        server.call(1, "list_directory", {"path": str(odd_names)})
        server.call(2, "directory_tree", {"path": str(odd_names)})
        server.call(3, "search_files", {"path": str(odd_names), "pattern": "*"})
        server.send({"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": file_uri(odd_names)}})
        answers = {n: server.answer(n, timeout=20) for n in (1, 2, 3, 4)}
    assert "[FILE] bad\\xff.txt" in answers[1]["result"]["content"][0]["text"]
    assert "bad\\xff.txt" in {node["name"] for node in answers[2]["result"]["structuredContent"]["tree"]}
    assert str(odd_names / "bad\\xff.txt") in answers[3]["result"]["structuredContent"]["matches"]
    assert "[FILE] bad\\xff.txt" in answers[4]["result"]["contents"][0]["text"]


def test_display_form_round_trips() -> None:
    from servers.filesystem.names import display_name, parse_name

    for name in [BAD, "plain.txt", "tab\there", "back\\slash", "\\x41", "a\\\\b", "ünïcödé", os.fsdecode(b"\x80\xff"),
                 "\x7f", "\\", "\udcff\\xff"]:
        shown = display_name(name)
        shown.encode("utf-8")  # always encodable
        assert parse_name(shown) == name, (name, shown)
    assert display_name("plain.txt") == "plain.txt" and display_name(BAD) == "bad\\xff.txt"
    assert parse_name("C:\\Users") == "C:\\Users"  # a backslash that is no escape stays as typed


# ---- long names and the OS limits -----------------------------------------------------------


@pytest.mark.anyio
async def test_long_names_get_clear_answers(layout: Layout) -> None:
    longest = "n" * 255
    async with connect(build_server([layout.root])) as client:
        made = await client.call_tool("write_file", {"path": longest, "content": "x"})
        too_long_name = await client.call_tool("write_file", {"path": "n" * 4096, "content": "x"})
        too_long_path = await client.call_tool("read_text_file", {"path": "d/" * 2100 + "x"})
        listing = text_of(await client.call_tool("list_directory", {"path": "."}))
    assert made["isError"] is False and (layout.root / longest).read_text() == "x"
    assert too_long_name["isError"] and "longer than 255 bytes" in text_of(too_long_name)
    assert too_long_path["isError"] and "too long" in text_of(too_long_path)
    assert f"[FILE] {longest}" in listing.splitlines()


def _deep_chain(top: Path, depth: int, name: str) -> list[str]:
    """Nested directories `name/name/...` made through descriptors (the path may exceed PATH_MAX)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    return [name] * depth


def _remove_chain(top: Path, depth: int, name: str) -> None:
    """Undo `_deep_chain`, or what a failed one made, without recursion (pytest's clean-up would hit
    Python's recursion limit and leave the tree behind)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    made = 0
    for _ in range(depth):
        try:
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        except FileNotFoundError:
            break
        os.close(fd)
        fd, made = child, made + 1
    with contextlib.suppress(FileNotFoundError):
        os.unlink("bottom.txt", dir_fd=fd)
    for _ in range(made):
        parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        os.rmdir(name, dir_fd=parent)
        fd = parent
    os.close(fd)


@pytest.fixture
def deep_trees(layout: Layout) -> Iterator[None]:
    try:
        _deep_chain(layout.root / "sub", 1000, "d")  # 2000 characters deep: searchable, too deep to nest in a tree
        _deep_chain(layout.root, 30, "e" * 250)  # longer than PATH_MAX (4096 bytes) in total
        yield
    finally:  # also after a failed or interrupted set-up: a tree left behind breaks pytest's own clean-up
        _remove_chain(layout.root / "sub", 1000, "d")
        _remove_chain(layout.root, 30, "e" * 250)


@pytest.mark.timeout(120)
@pytest.mark.usefixtures("deep_trees")
def test_deep_trees_are_bounded_and_encodable(layout: Layout) -> None:
    sandbox = Sandbox([layout.root])
    found = ops.search(sandbox.resolve("sub"), "bottom.txt", [], 100)
    assert found.entries == [str(layout.root / "sub" / "/".join(["d"] * 1000) / "bottom.txt")]
    tree = ops.directory_tree(sandbox.resolve("sub"), [], 5000)
    assert tree.depth_limited and "deeper than 48 levels" in (tree.note() or "")
    json.dumps(tree.entries)  # nested 48 levels at most: encodable
    node, depth = tree.entries[0], 1
    while "children" in node and node["children"]:
        node, depth = node["children"][0], depth + 1
    assert depth == 48 and node.get("truncated") is True
    beyond = ops.search(sandbox.resolve("."), "bottom.txt", [], 100)
    assert "longer than 4096 characters were not searched" in (beyond.note() or "")


@pytest.mark.timeout(300)
def test_a_hundred_thousand_entries_in_bounded_time_and_memory(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.mkdir()
    fd = os.open(big, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for n in range(100_000):
            os.close(os.open(f"file{n:06d}.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    sandbox = Sandbox([tmp_path])
    sp = sandbox.resolve("big")
    tracemalloc.start()
    try:
        started = time.perf_counter()
        listing = ops.list_directory(sp, 1000)
        tree = ops.directory_tree(sp, [], 1000)
        search = ops.search(sp, "*.nothing", [], 1000)
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [e.name for e in listing.entries[:2]] == ["file000000.txt", "file000001.txt"] and len(
        listing.entries
    ) == 1000
    assert listing.truncated and listing.note() == "[truncated at 1000 entries]"
    assert tree.truncated and len(tree.entries) == 1000
    assert search.entries == [] and search.visits_exhausted is False  # 100 000 visits is exactly the budget
    smaller = ops.search(sp, "*.nothing", [], 10)  # a budget of 1000 visits
    assert smaller.visits_exhausted and "stopped after visiting 1000 entries" in (smaller.note() or "")
    assert elapsed < 120  # seconds here; a walk without bounds is not the issue, but hours would be
    assert peak < 200 * 1024 * 1024, peak

"""The filesystem server through mcp_kit.testing: every tool, modes, confirmation, audit, roots, resources."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_kit import MCPError
from mcp_kit.testing import connect
from servers.filesystem.server import build_server
from servers.filesystem.uris import file_uri
from tests.helpers.fs_layout import SECRET, Layout
from tests.helpers.live_http import until

WRITE_TOOLS = {"write_file", "edit_file", "create_directory", "move_file"}
READ_TOOLS = {
    "read_text_file", "read_file", "read_media_file", "read_multiple_files", "list_directory",
    "list_directory_with_sizes", "directory_tree", "search_files", "get_file_info", "list_allowed_directories",
}


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in result["content"])


async def call_ok(client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert result["isError"] is False, text_of(result)
    return result


async def call_error(client, name: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(name, arguments)
    assert result["isError"] is True, text_of(result)
    return text_of(result)


# ---- tool list ------------------------------------------------------------------


@pytest.mark.anyio
async def test_tools_and_their_annotations(layout: Layout) -> None:
    async with connect(build_server([layout.root])) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
    assert set(tools) == READ_TOOLS | WRITE_TOOLS
    for name in READ_TOOLS:
        assert tools[name]["annotations"]["readOnlyHint"] is True
    assert {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}.items() <= tools["write_file"][
        "annotations"
    ].items()
    assert tools["edit_file"]["annotations"]["idempotentHint"] is False
    assert tools["create_directory"]["annotations"]["destructiveHint"] is False
    assert tools["move_file"]["annotations"]["destructiveHint"] is True
    edit_schema = tools["edit_file"]["inputSchema"]
    assert set(edit_schema["properties"]) == {"path", "edits", "dryRun"}
    assert set(tools["read_text_file"]["inputSchema"]["properties"]) == {"path", "head", "tail"}
    assert set(tools["move_file"]["inputSchema"]["properties"]) == {"source", "destination"}
    assert tools["list_directory_with_sizes"]["inputSchema"]["properties"]["sortBy"]["enum"] == ["name", "size"]
    assert "outputSchema" in tools["get_file_info"] and "outputSchema" in tools["directory_tree"]


@pytest.mark.anyio
async def test_read_only_mode_does_not_register_write_tools(layout: Layout) -> None:
    async with connect(build_server([layout.root], read_only=True)) as client:
        names = {tool["name"] for tool in await client.list_tools()}
        with pytest.raises(MCPError, match="Unknown tool 'write_file'"):
            await client.call_tool("write_file", {"path": "x.txt", "content": "x"})
    assert names == READ_TOOLS
    assert not (layout.root / "x.txt").exists()


# ---- every tool -----------------------------------------------------------------


@pytest.mark.anyio
async def test_reading_tools(layout: Layout) -> None:
    (layout.root / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(10))
    (layout.root / "sound.wav").write_bytes(b"RIFF0000WAVE")
    (layout.root / "data.bin").write_bytes(b"\x00\x01\x02")
    async with connect(build_server([layout.root])) as client:
        assert text_of(await call_ok(client, "read_text_file", {"path": "ok.txt"})) == "hello\nworld\n"
        assert text_of(await call_ok(client, "read_file", {"path": "ok.txt", "head": 1})) == "hello"
        assert text_of(await call_ok(client, "read_text_file", {"path": "ok.txt", "tail": 1})) == "world"
        image = (await call_ok(client, "read_media_file", {"path": "pic.png"}))["content"][0]
        assert image["type"] == "image" and image["mimeType"] == "image/png"
        assert base64.b64decode(image["data"]).startswith(b"\x89PNG")
        audio = (await call_ok(client, "read_media_file", {"path": "sound.wav"}))["content"][0]
        assert audio["type"] == "audio" and audio["mimeType"].startswith("audio/")
        blob = (await call_ok(client, "read_media_file", {"path": "data.bin"}))["content"][0]
        assert blob["type"] == "resource" and base64.b64decode(blob["resource"]["blob"]) == b"\x00\x01\x02"
        binary = await call_error(client, "read_text_file", {"path": "data.bin"})
        assert "read_media_file" in binary
        many = text_of(
            await call_ok(client, "read_multiple_files", {"paths": ["ok.txt", "missing.txt", "../outside/secret.txt"]})
        )
        assert "ok.txt:\nhello\nworld\n" in many
        assert "missing.txt: Error - No such file" in many
        assert "../outside/secret.txt: Error - Access denied" in many and SECRET not in many


@pytest.mark.anyio
async def test_directory_tools(layout: Layout) -> None:
    (layout.root / "sub" / "code.py").write_text("print(1)\n")
    async with connect(build_server([layout.root])) as client:
        listing = text_of(await call_ok(client, "list_directory", {"path": str(layout.root)}))
        assert "[DIR] sub" in listing.splitlines() and "[FILE] ok.txt" in listing.splitlines()
        sized = text_of(await call_ok(client, "list_directory_with_sizes", {"path": ".", "sortBy": "size"}))
        assert "Combined size:" in sized and "12 B" in sized
        tree = await call_ok(client, "directory_tree", {"path": str(layout.root), "excludePatterns": ["*.txt"]})
        names = [node["name"] for node in tree["structuredContent"]["tree"]]
        assert "sub" in names and "ok.txt" not in names and "linkdir_out" not in names
        assert tree["structuredContent"]["truncated"] is False
        found = await call_ok(client, "search_files", {"path": str(layout.root), "pattern": "*.py"})
        assert found["structuredContent"]["matches"] == [str(layout.root / "sub" / "code.py")]
        info = await call_ok(client, "get_file_info", {"path": "ok.txt"})
        assert info["structuredContent"]["size"] == 12 and info["structuredContent"]["isFile"] is True
        allowed = await call_ok(client, "list_allowed_directories", {})
        assert allowed["structuredContent"]["directories"] == [str(layout.root)]


@pytest.mark.anyio
async def test_listing_limit_note(layout: Layout) -> None:
    for n in range(5):
        (layout.root / f"f{n}.txt").write_text("")
    async with connect(build_server([layout.root], max_entries=3)) as client:
        listing = text_of(await call_ok(client, "list_directory", {"path": "."}))
        found = await call_ok(client, "search_files", {"path": ".", "pattern": "*.txt"})
    assert listing.endswith("[truncated at 3 entries]")
    assert found["structuredContent"]["truncated"] is True and len(found["structuredContent"]["matches"]) == 3


@pytest.mark.anyio
async def test_read_limit_truncates_text(layout: Layout) -> None:
    (layout.root / "long.txt").write_text("x" * 100)
    async with connect(build_server([layout.root], max_read_bytes=10)) as client:
        text = text_of(await call_ok(client, "read_text_file", {"path": "long.txt"}))
        media = await call_error(client, "read_media_file", {"path": "long.txt"})
    assert text.startswith("x" * 10 + "\n\n[truncated at 10 bytes")
    assert "too large" in media


@pytest.mark.anyio
async def test_create_directory_makes_a_chain_deeper_than_the_link_limit(layout: Layout) -> None:
    # Each directory made on the way is looked at again; those looks are not link hops (limit 40).
    deep = "/".join(f"d{i}" for i in range(60))
    async with connect(build_server([layout.root])) as client:
        await call_ok(client, "create_directory", {"path": deep})
        await call_ok(client, "write_file", {"path": deep + "/leaf.txt", "content": "at the bottom"})
    assert (layout.root / deep / "leaf.txt").read_text() == "at the bottom"


@pytest.mark.anyio
async def test_writing_tools(layout: Layout) -> None:
    async with connect(build_server([layout.root])) as client:
        assert text_of(await call_ok(client, "write_file", {"path": "new.txt", "content": "a\n  b\nc\n"})) == \
            "Successfully wrote to new.txt"
        preview = text_of(await call_ok(client, "edit_file", {
            "path": "new.txt", "edits": [{"oldText": "b", "newText": "B"}], "dryRun": True}))
        assert "-  b\n+  B\n" in preview and preview.startswith("```diff\n")
        assert (layout.root / "new.txt").read_text() == "a\n  b\nc\n"
        await call_ok(client, "edit_file", {"path": "new.txt", "edits": [{"oldText": "a\nb", "newText": "A\nb"}]})
        assert (layout.root / "new.txt").read_text() == "A\n  b\nc\n"
        missing = await call_error(
            client, "edit_file", {"path": "new.txt", "edits": [{"oldText": "zzz", "newText": ""}]}
        )
        assert "was not found" in missing
        await call_ok(client, "create_directory", {"path": "made/deeper"})
        assert (layout.root / "made" / "deeper").is_dir()
        await call_ok(client, "move_file", {"source": "new.txt", "destination": "made/moved.txt"})
        assert (layout.root / "made" / "moved.txt").exists() and not (layout.root / "new.txt").exists()
        exists = await call_error(client, "move_file", {"source": "ok.txt", "destination": "made/moved.txt"})
        assert "already exists" in exists
        assert (layout.root / "ok.txt").exists()


@pytest.mark.anyio
async def test_every_path_argument_is_confined(layout: Layout) -> None:
    attacks = [str(layout.outside / "secret.txt"), str(layout.sibling / "evil.txt"), "../outside/secret.txt",
               str(layout.root / "link_out"), str(layout.root / "linkdir_out" / "secret.txt"), "ok.txt\x00"]
    calls = [
        ("read_text_file", lambda p: {"path": p}), ("read_media_file", lambda p: {"path": p}),
        ("list_directory", lambda p: {"path": p}), ("directory_tree", lambda p: {"path": p}),
        ("search_files", lambda p: {"path": p, "pattern": "*"}), ("get_file_info", lambda p: {"path": p}),
        ("write_file", lambda p: {"path": p, "content": "pwned"}),
        ("edit_file", lambda p: {"path": p, "edits": [{"oldText": "TOP", "newText": "pwned"}]}),
        ("create_directory", lambda p: {"path": p + "/made"}),
        ("move_file", lambda p: {"source": p, "destination": "stolen.txt"}),
        ("move_file", lambda p: {"source": "ok.txt", "destination": p}),
    ]
    async with connect(build_server([layout.root])) as client:
        for attack in attacks:
            for name, make in calls:
                message = await call_error(client, name, make(attack))
                assert "Access denied" in message, (name, attack, message)
                assert SECRET not in message
    assert (layout.outside / "secret.txt").read_text() == SECRET
    assert sorted(os.listdir(layout.outside)) == ["secret.txt", "sub"]
    assert not (layout.root / "stolen.txt").exists() and (layout.root / "ok.txt").exists()


# ---- confirmation -----------------------------------------------------------------


@pytest.mark.anyio
async def test_confirm_writes_without_elicitation_changes_nothing(layout: Layout) -> None:
    async with connect(build_server([layout.root], confirm_writes=True)) as client:
        for name, args in [("write_file", {"path": "ok.txt", "content": "x"}),
                           ("edit_file", {"path": "ok.txt", "edits": [{"oldText": "hello", "newText": "bye"}]}),
                           ("move_file", {"source": "ok.txt", "destination": "moved.txt"})]:
            message = await call_error(client, name, args)
            assert "Confirmation required" in message and "Nothing was changed" in message
        preview = await call_ok(
            client, "edit_file", {"path": "ok.txt", "edits": [{"oldText": "hello", "newText": "bye"}], "dryRun": True}
        )
    assert "+bye" in text_of(preview)
    assert (layout.root / "ok.txt").read_text() == "hello\nworld\n" and not (layout.root / "moved.txt").exists()


@pytest.mark.anyio
@pytest.mark.parametrize(("answer", "changed"), [
    ({"action": "accept", "content": {"confirm": True}}, True),
    ({"action": "accept", "content": {"confirm": False}}, False),
    ({"action": "decline"}, False),
    ({"action": "cancel"}, False),
])
async def test_confirm_writes_asks_the_user(layout: Layout, answer: dict[str, Any], changed: bool) -> None:
    questions: list[dict[str, Any]] = []

    def elicit(params: dict[str, Any]) -> dict[str, Any]:
        questions.append(params)
        return answer

    async with connect(build_server([layout.root], confirm_writes=True), elicitation=elicit) as client:
        edit = await client.call_tool(
            "edit_file", {"path": "ok.txt", "edits": [{"oldText": "hello", "newText": "bye"}]}
        )
        write = await client.call_tool("write_file", {"path": "fresh.txt", "content": "x"})
        move = await client.call_tool("move_file", {"source": "sub/inner.txt", "destination": "inner.txt"})
    assert [edit["isError"], write["isError"], move["isError"]] == [not changed] * 3
    assert "-hello\n+bye" in questions[0]["message"]  # the user sees the diff
    assert "fresh.txt" in questions[1]["message"] and "inner.txt" in questions[2]["message"]
    assert questions[0]["requestedSchema"]["properties"]["confirm"]["type"] == "boolean"
    assert ((layout.root / "ok.txt").read_text() == "bye\nworld\n") is changed
    assert (layout.root / "fresh.txt").exists() is changed
    assert (layout.root / "inner.txt").exists() is changed


# ---- audit log ------------------------------------------------------------------


@pytest.mark.anyio
async def test_audit_log_records_every_call(layout: Layout, tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    async with connect(build_server([layout.root], audit_log=str(log))) as client:
        await call_ok(client, "read_text_file", {"path": "ok.txt"})
        await call_error(client, "read_text_file", {"path": "/etc/passwd"})
        await call_ok(client, "write_file", {"path": "w.txt", "content": "data"})
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["tool"] for r in records] == ["read_text_file", "read_text_file", "write_file"]
    assert [r["outcome"] for r in records] == ["ok", "error", "ok"]
    assert records[0]["arguments"] == {"path": "ok.txt"}
    assert "Access denied" in records[1]["error"]
    assert all(r["duration_ms"] >= 0 and r["time"] and r["session"] for r in records)


# ---- roots ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_client_roots_narrow_the_allowed_directories(layout: Layout) -> None:
    roots = [{"uri": file_uri(layout.root / "sub"), "name": "sub"}, {"uri": file_uri(layout.outside)}]
    async with connect(build_server([layout.root]), roots=roots) as client:
        allowed = await call_ok(client, "list_allowed_directories", {})
        assert allowed["structuredContent"]["directories"] == [str(layout.root / "sub")]
        assert text_of(await call_ok(client, "read_text_file", {"path": "inner.txt"})) == "inner\n"
        assert "Access denied" in await call_error(client, "read_text_file", {"path": str(layout.root / "ok.txt")})
        assert "Access denied" in await call_error(
            client, "read_text_file", {"path": str(layout.outside / "secret.txt")}
        )
        roots[:] = [{"uri": file_uri(layout.root)}]
        await client.notify("notifications/roots/list_changed")
        with anyio.fail_after(5):
            while True:
                allowed = await call_ok(client, "list_allowed_directories", {})
                if allowed["structuredContent"]["directories"] == [str(layout.root)]:
                    break
                await anyio.sleep(0.02)
        assert (
            text_of(await call_ok(client, "read_text_file", {"path": str(layout.root / "ok.txt")})) == "hello\nworld\n"
        )


@pytest.mark.anyio
async def test_client_roots_outside_leave_nothing_allowed(layout: Layout) -> None:
    async with connect(build_server([layout.root]), roots=[{"uri": file_uri(layout.outside)}]) as client:
        assert (await call_ok(client, "list_allowed_directories", {}))["structuredContent"]["directories"] == []
        assert "no allowed directories" in await call_error(
            client, "read_text_file", {"path": str(layout.root / "ok.txt")}
        )


# ---- resources --------------------------------------------------------------------


@pytest.mark.anyio
async def test_files_as_resources(layout: Layout) -> None:
    (layout.root / "data.bin").write_bytes(b"\xff\xfe\x00")
    async with connect(build_server([layout.root])) as client:
        listed = await client.list_resources()
        templates = await client.list_resource_templates()
        text = await client.read_resource(file_uri(layout.root / "ok.txt"))
        blob = await client.read_resource(file_uri(layout.root / "data.bin"))
        directory = await client.read_resource(file_uri(layout.root))
        for uri in (
            file_uri(layout.outside / "secret.txt"),
            file_uri(layout.root / "link_out"),
            file_uri(layout.sibling),
        ):
            with pytest.raises(MCPError) as denied:
                await client.read_resource(uri)
            assert denied.value.code == -32002 and SECRET not in str(denied.value)
    assert [r["uri"] for r in listed] == [file_uri(layout.root)]
    assert [t["uriTemplate"] for t in templates] == ["file:///{+path}"]
    assert text == [{"uri": file_uri(layout.root / "ok.txt"), "mimeType": "text/plain", "text": "hello\nworld\n"}]
    assert base64.b64decode(blob[0]["blob"]) == b"\xff\xfe\x00"
    assert "[DIR] sub" in directory[0]["text"]


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_subscription_follows_changes_deletion_and_recreation(layout: Layout) -> None:
    app = build_server([layout.root])
    target = layout.root / "watched file.txt"  # the space is percent-encoded in the URI
    target.write_text("v1")
    uri = file_uri(target)
    assert "%20" in uri
    control = layout.root / "control.txt"
    control.write_text("c1")
    async with connect(app) as client:
        await client.subscribe(uri)  # answered once the path is registered: no change after this is missed
        await client.subscribe(file_uri(control))
        assert app.hub.watching(uri)
        for change in (lambda: target.write_text("v2"), target.unlink, lambda: target.write_text("v3")):
            seen = len(client.notifications)
            change()
            note = await client.wait_notification("notifications/resources/updated", timeout=20, after=seen,
                                                  where=lambda p: p["uri"] == uri)
            assert note["params"]["uri"] == uri
        await client.request("ping")  # notifications of earlier changes have arrived
        seen = len(client.notifications)
        (layout.root / "other.txt").write_text("unrelated")
        control.write_text("c2")  # a subscribed file changed beside it: seen, and nothing for `uri`
        await client.wait_notification("notifications/resources/updated", timeout=20, after=seen,
                                       where=lambda p: p["uri"] == file_uri(control))
        await client.request("ping")
        updates = [
            n["params"]["uri"] for n in client.notifications[seen:] if n["method"] == "notifications/resources/updated"
        ]
        assert file_uri(control) in updates and uri not in updates
        target.write_text("v4")  # the target's watcher, which saw the unrelated writes beside it, is still alive
        await client.wait_notification("notifications/resources/updated", timeout=20, after=seen,
                                       where=lambda p: p["uri"] == uri)
        await client.unsubscribe(uri)
        await until(lambda: not app.hub.watching(uri), "the watcher to end")


@pytest.mark.anyio
async def test_subscribing_outside_the_roots_gets_the_read_error(layout: Layout) -> None:
    app = build_server([layout.root])
    async with connect(app) as client:
        for uri in (file_uri(layout.outside / "secret.txt"), file_uri(layout.root / "link_out"),
                    file_uri(layout.root / "linkdir_out" / "new.txt")):
            with pytest.raises(MCPError) as read:
                await client.read_resource(uri)
            with pytest.raises(MCPError) as subscribed:
                await client.subscribe(uri)
            assert (subscribed.value.code, subscribed.value.message) == (read.value.code, read.value.message)
            assert subscribed.value.code == -32002 and "Access denied" in subscribed.value.message
            assert app.hub.subscribers(uri) == 0 and not app.hub.watching(uri)
        assert app.lifespan_state.directories == ()  # nothing outside is watched

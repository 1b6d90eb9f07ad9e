"""Near misses of the filesystem root, through the tools, the `file://` resources and client roots.

The allowed root is `<base>/root`. Beside it live directories whose names come close: `root2`,
`root_evil`, `root.bak`, `root ` (a trailing space), `Root` (case), and, for a root named `café`, its
decomposed spelling `café` (Unicode normalisation: two different directories on Linux). Each holds a
secret that must never come back, whichever spelling reaches it: absolute, relative with `..`, through
the root and back out, through a symbolic link inside the root, as a `file://` URI with encoded dots, or
as a client root. Every test also reads something legitimate first, so a refusal is never vacuous.
Only behaviour is checked (what a client sees), so the tests hold however the sandbox is built.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from mcp_kit import MCPError
from mcp_kit.testing import connect
from servers.filesystem.server import build_server
from servers.filesystem.uris import file_uri
from tests.helpers.fs_layout import SECRET

pytestmark = pytest.mark.anyio

NEAR_NAMES = ["root2", "root_evil", "root.bak", "root ", "Root", "roo", "rootroot"]
NFC_ROOT = unicodedata.normalize("NFC", "café")
NFD_ROOT = unicodedata.normalize("NFD", "café")


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in result["content"])


def make_siblings(base: Path, root_name: str, names: list[str]) -> tuple[Path, list[Path]]:
    """The allowed root (with ok.txt and sub/) and each near-miss sibling that this filesystem can hold apart."""
    root = base / root_name
    (root / "sub").mkdir(parents=True)
    (root / "ok.txt").write_text("inside\n")
    siblings = []
    for name in names:
        sibling = base / name
        try:
            sibling.mkdir()
        except FileExistsError:  # a case- or normalisation-insensitive filesystem: the same directory
            continue
        (sibling / "secret.txt").write_text(SECRET)
        siblings.append(sibling)
    return root, siblings


def spellings(root: Path, sibling: Path) -> list[str]:
    """Ways to name `sibling/secret.txt` that start from, or pass through, the root."""
    name = sibling.name
    return [
        str(sibling / "secret.txt"),
        str(sibling) + "/",
        f"../{name}/secret.txt",
        f"./../{name}/secret.txt",
        f"sub/../../{name}/secret.txt",
        f"{root}/../{name}/secret.txt",
        f"{root}/./sub/../../{name}/secret.txt",
        f"{root}//..//{name}//secret.txt",
        f"/{root}/../{name}/secret.txt",
        file_uri(sibling / "secret.txt"),
        file_uri(root) + f"/../{name}/secret.txt",
        file_uri(root) + f"/%2e%2e/{name}/secret.txt",
        file_uri(root) + f"/..%2F{name}%2Fsecret.txt",
        f"file://localhost{root}/../{name}/secret.txt",
    ]


@pytest.fixture
def near(tmp_path: Path) -> tuple[Path, list[Path]]:
    return make_siblings(tmp_path.resolve(), "root", NEAR_NAMES)


async def test_tools_refuse_every_spelling_of_every_sibling(near: tuple[Path, list[Path]]) -> None:
    root, siblings = near
    assert len(siblings) >= 5
    async with connect(build_server([root])) as client:
        ok = await client.call_tool("read_text_file", {"path": "ok.txt"})
        assert (ok["isError"], text_of(ok)) == (False, "inside\n")
        for sibling in siblings:
            for path in spellings(root, sibling):
                for name, arguments in (("read_text_file", {"path": path}), ("get_file_info", {"path": path}),
                                        ("list_directory", {"path": str(Path(path).parent)}),
                                        ("write_file", {"path": path, "content": "pwned"})):
                    result = await client.call_tool(name, arguments)
                    message = text_of(result)
                    assert result["isError"] is True, (name, path, message)
                    assert SECRET not in message and "[FILE] secret.txt" not in message, (name, path)
    for sibling in siblings:
        assert sorted(os.listdir(sibling)) == ["secret.txt"] and (sibling / "secret.txt").read_text() == SECRET


async def test_resources_refuse_every_spelling_of_every_sibling(near: tuple[Path, list[Path]]) -> None:
    root, siblings = near
    async with connect(build_server([root])) as client:
        assert (await client.read_resource(file_uri(root / "ok.txt")))[0]["text"] == "inside\n"
        for sibling in siblings:
            for uri in (file_uri(sibling / "secret.txt"), file_uri(sibling), file_uri(root) + f"/../{sibling.name}",
                        file_uri(root) + f"/%2e%2e/{sibling.name}/secret.txt",
                        file_uri(root) + f"/..%2F{sibling.name}%2Fsecret.txt"):
                with pytest.raises(MCPError) as denied:
                    await client.read_resource(uri)
                assert denied.value.code == -32002, uri
                assert SECRET not in str(denied.value), uri


async def test_paths_that_merely_contain_a_sibling_name_stay_allowed(near: tuple[Path, list[Path]]) -> None:
    root, _ = near
    (root / "root2").mkdir()
    (root / "root2" / "mine.txt").write_text("mine\n")
    (root / "..root2").write_text("dots\n")
    async with connect(build_server([root])) as client:
        for path, expected in (
            ("root2/mine.txt", "mine\n"),
            (f"{root}/root2/mine.txt", "mine\n"),
            ("..root2", "dots\n"),
            (f"{root}/../root/ok.txt", "inside\n"),
            ("sub/../root2/mine.txt", "mine\n"),
        ):
            result = await client.call_tool("read_text_file", {"path": path})
            assert (result["isError"], text_of(result)) == (False, expected), path


async def test_a_link_inside_the_root_to_a_sibling_is_refused(near: tuple[Path, list[Path]]) -> None:
    root, siblings = near
    os.symlink(siblings[0], root / "to_sibling")
    os.symlink(siblings[0] / "secret.txt", root / "to_secret")
    async with connect(build_server([root])) as client:
        for path in ("to_sibling/secret.txt", "to_secret", str(root / "to_sibling")):
            result = await client.call_tool("read_text_file", {"path": path})
            assert result["isError"] is True and "Access denied" in text_of(result), path
            assert SECRET not in text_of(result)
        with pytest.raises(MCPError) as denied:
            await client.read_resource(file_uri(root / "to_secret"))
        assert denied.value.code == -32002 and SECRET not in str(denied.value)


async def test_client_roots_that_nearly_match_grant_nothing(near: tuple[Path, list[Path]]) -> None:
    root, siblings = near
    offered = [{"uri": file_uri(sibling)} for sibling in siblings]
    async with connect(build_server([root]), roots=offered) as client:
        allowed = await client.call_tool("list_allowed_directories", {})
        assert allowed["structuredContent"]["directories"] == []
        for sibling in siblings:
            result = await client.call_tool("read_text_file", {"path": str(sibling / "secret.txt")})
            assert result["isError"] is True and SECRET not in text_of(result)
    async with connect(build_server([root]), roots=[*offered, {"uri": file_uri(root)}]) as client:
        allowed = await client.call_tool("list_allowed_directories", {})
        assert allowed["structuredContent"]["directories"] == [str(root)]
        assert text_of(await client.call_tool("read_text_file", {"path": "ok.txt"})) == "inside\n"
        for sibling in siblings:
            result = await client.call_tool("read_text_file", {"path": str(sibling / "secret.txt")})
            assert result["isError"] is True and SECRET not in text_of(result), sibling


async def test_a_server_root_given_with_dots_or_a_trailing_slash_is_the_same_root(
    near: tuple[Path, list[Path]],
) -> None:
    root, siblings = near
    for spelled in (f"{root}/", f"{root}/sub/..", f"{root}/./"):
        async with connect(build_server([spelled])) as client:
            assert text_of(await client.call_tool("read_text_file", {"path": "ok.txt"})) == "inside\n"
            result = await client.call_tool("read_text_file", {"path": str(siblings[0] / "secret.txt")})
            assert result["isError"] is True and SECRET not in text_of(result), spelled


@pytest.mark.parametrize(("root_name", "sibling_name"), [(NFC_ROOT, NFD_ROOT), (NFD_ROOT, NFC_ROOT)],
                         ids=["root NFC, sibling NFD", "root NFD, sibling NFC"])
async def test_unicode_normalisation_variants_of_the_root_are_other_directories(
        tmp_path: Path, root_name: str, sibling_name: str) -> None:
    root, siblings = make_siblings(tmp_path.resolve(), root_name, [sibling_name, sibling_name + "2"])
    if len(siblings) < 2:
        pytest.skip("this filesystem normalises names: both spellings are one directory")
    async with connect(build_server([root])) as client:
        assert text_of(await client.call_tool("read_text_file", {"path": str(root / "ok.txt")})) == "inside\n"
        for sibling in siblings:
            for path in spellings(root, sibling):
                result = await client.call_tool("read_text_file", {"path": path})
                assert result["isError"] is True and SECRET not in text_of(result), path
            with pytest.raises(MCPError) as denied:
                await client.read_resource(file_uri(sibling / "secret.txt"))
            assert denied.value.code == -32002


def padded_path(root: Path, length: int) -> str:
    """An absolute path inside `root` of exactly `length` characters (components of at most 200)."""
    path = str(root)
    while len(path) < length:
        path += "/" + "d" * min(200, length - len(path) - 1)
    assert len(path) == length
    return path


async def test_the_path_and_name_limits_hold_at_their_exact_boundaries(near: tuple[Path, list[Path]]) -> None:
    root, _ = near
    async with connect(build_server([root])) as client:
        async def message(name: str, arguments: dict[str, Any]) -> str:
            result = await client.call_tool(name, arguments)
            assert result["isError"] is True, arguments
            return text_of(result)

        at_limit = await message("read_text_file", {"path": padded_path(root, 4096)})  # the OS may refuse it, we do not
        assert "the limit is 4096" not in at_limit
        assert "the limit is 4096" in await message("read_text_file", {"path": padded_path(root, 4097)})
        longest = "é" * 127 + "a"  # 255 bytes in UTF-8: the longest name a filesystem takes
        written = await client.call_tool("write_file", {"path": longest, "content": "edge"})
        assert written["isError"] is False and (root / longest).read_text() == "edge"
        assert text_of(await client.call_tool("read_text_file", {"path": longest})) == "edge"
        assert "longer than 255 bytes" in await message("write_file", {"path": "é" * 128, "content": "x"})
        assert sorted(os.listdir(root)) == sorted(["ok.txt", "sub", longest])


async def test_a_parent_that_is_a_file_or_missing_is_named_in_the_error(near: tuple[Path, list[Path]]) -> None:
    root, _ = near
    async with connect(build_server([root])) as client:
        for name, arguments, why in (("write_file", {"path": "ok.txt/child.txt", "content": "x"}, "not a directory"),
                                     ("read_text_file", {"path": "ok.txt/child.txt"}, "not a directory"),
                                     ("write_file", {"path": "missing/x.txt", "content": "x"}, "does not exist")):
            result = await client.call_tool(name, arguments)
            message = text_of(result)
            assert result["isError"] is True and why in message and repr(arguments["path"]) in message, message
            assert "SandboxedPath" not in message and "bound method" not in message  # no internals, only the path
    assert (root / "ok.txt").read_text() == "inside\n" and not (root / "missing").exists()


async def test_client_roots_that_are_missing_or_malformed_are_skipped_not_fatal(near: tuple[Path, list[Path]]) -> None:
    root, _ = near
    offered = [{"uri": file_uri(root / "no_such_dir")}, {"uri": file_uri(root) + "/x%00y"},
               {"uri": file_uri(root / "ok.txt")}, {"uri": file_uri(root / "sub")}]
    async with connect(build_server([root]), roots=offered) as client:
        allowed = await client.call_tool("list_allowed_directories", {})
        assert allowed["structuredContent"]["directories"] == [str(root / "sub")]

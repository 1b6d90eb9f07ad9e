"""Agent Skills over MCP (SEP-2640): a server serving the skills under examples/skills/.

    python examples/skills_server.py                    # serve them over stdio (or --transport http --port 8000)
    python examples/skills_server.py --demo             # list them, fetch one, browse and read its files

Each skill is a folder with a SKILL.md (YAML frontmatter with at least `name` and
`description`) and any supporting files. Clients enumerate them with `skills/list` (each file
with its sha256 digest and size), fetch one with `skills/get`, browse folders with
`resources/directory/read` and read files as `skill://` resources.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from mcp_kit import MCPServer

app = MCPServer("skills-demo", instructions="Skills: see skills/list. release-notes writes release notes.")
app.add_skills(Path(__file__).resolve().parent / "skills")  # every folder with a SKILL.md is a skill


@app.tool(read_only=True)
def list_merged_changes(since: str) -> list[str]:
    """The changes merged since a tag (e.g. "v1.2.0"), one line each: what the release-notes skill starts from."""
    return [f"{since}..HEAD: fix the retry loop", f"{since}..HEAD: add the --json flag"]


async def demo() -> None:
    from mcp_kit.testing import connect

    async with connect(app) as client:
        print("extensions:", client.initialize_result["capabilities"]["extensions"])
        for entry in (await client.request("skills/list", {}))["skills"]:
            print(f"skill {entry['uri']}: {entry['frontmatter']['description']}")
            for item in entry["resources"]:
                print(f"  {item['uri']} {item['size']} bytes {item['digest'][:19]}…")
        skill = (await client.request("skills/get", {"uri": "skill://release-notes/SKILL.md"}))["skill"]
        folder = skill["uri"].rsplit("/", 1)[0]
        for child in (await client.request("resources/directory/read", {"uri": folder}))["resources"]:
            print(f"in {folder}: {child['uri']} ({child['mimeType']})")
        text = (await client.read_resource("skill://release-notes/templates/notes.md"))[0]["text"]
        print("template:", text.splitlines()[0])


if __name__ == "__main__":
    if "--demo" in sys.argv[1:]:
        anyio.run(demo)
    else:
        import argparse

        from mcp_kit import add_run_arguments

        app.run_from_args(add_run_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0])).parse_args())

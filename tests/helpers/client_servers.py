"""Small stand-in servers for client and CLI tests, written into tmp dirs and run with sys.executable."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

STOCK = shlex.join([sys.executable, "-m", "servers.stock", "--provider", "sample"])

# Prints a banner to stdout (the classic mistake), then answers like an MCP server.
CHATTY = '''
import json, sys
print("Starting my server...", flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "chatty", "version": "0"}}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    elif msg.get("method") == "tools/list":
        tools = [{"name": "hello", "description": "Says hello.", "inputSchema": {"type": "object"}}]
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": tools}}), flush=True)
'''

# Prints text to stdout and never speaks MCP; leaves when stdin closes.
JUNK_THEN_WAIT = '''
import sys
print("hello, I am not JSON", flush=True)
sys.stdin.read()
'''

# Prints text to stdout and exits at once.
JUNK_THEN_EXIT = '''
print("Server ready on stdio!")
'''

# Exits during initialize with a message on stderr.
DIES_AT_INITIALIZE = '''
import sys
sys.stdin.readline()
print("fatal: FOO_API_KEY is not set", file=sys.stderr)
sys.exit(3)
'''

# Completes the handshake, then exits when a tool is called.
DIES_AT_CALL = '''
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "fragile", "version": "0"}}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    elif msg.get("method") == "tools/call":
        print("crashed while calling the tool", file=sys.stderr, flush=True)
        sys.exit(7)
'''

# The official SDK's MCPServer: a server that is not ours.
SDK_SERVER = '''
import sys
from mcp.server.mcpserver import Context, MCPServer

mcp = MCPServer("sdk-greeter", version="9.9")

@mcp.tool()
def greet(name: str) -> str:
    """Say hello to someone."""
    return f"Hello, {name}!"

@mcp.tool()
async def count(n: int, ctx: Context) -> str:
    """Count to n, reporting progress."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"step {i + 1}")
    await ctx.info("counted")
    return f"counted to {n}"

@mcp.resource("note://hello")
def hello() -> str:
    """A note."""
    return "hello from the SDK"

@mcp.prompt()
def ask(topic: str) -> str:
    """Ask about a topic."""
    return f"Tell me about {topic}"

if __name__ == "__main__":
    if len(sys.argv) > 1:
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
    else:
        mcp.run()
'''


def script(tmp_path: Path, name: str, source: str) -> str:
    """Write `source` to tmp_path/name and return the command line that runs it."""
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return shlex.join([sys.executable, str(path)])

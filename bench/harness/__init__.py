"""Black-box MCP server benchmark harness (used by bench/run.py)."""

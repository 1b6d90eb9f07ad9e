"""Reference MCP servers built with mcp_kit."""

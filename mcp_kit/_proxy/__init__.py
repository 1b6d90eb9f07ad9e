"""The proxy: an `MCPServer` whose tools, resources and prompts live on another MCP server (`proxy(target)`)."""

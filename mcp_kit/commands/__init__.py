"""The pieces of the `mcp-kit` command line (see mcp_kit.cli): one module per command family."""

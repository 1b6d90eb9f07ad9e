"""The `mcp-kit` command line: `main` parses and dispatches, one module per command family."""

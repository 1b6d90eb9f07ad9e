"""`python -m mcp_kit`: the `mcp-kit` command, for an environment whose scripts are not on PATH."""

from ._cli.main import main

main()

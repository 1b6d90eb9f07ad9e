"""Stock reference server: quotes, price history, fundamentals and valuation over MCP.

Build it with `servers.stock.server.build_server(provider)`; run it with `python -m servers.stock`.
"""

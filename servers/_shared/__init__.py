"""What the reference servers share: JSON over HTTP with retries (`fetch.py`) and an async TTL cache (`cache.py`).

Imports only the public names of mcp_kit; knows nothing of any one server. Each server turns a
`FetchFailure` into its own errors, in its own words, in one place.
"""

"""Transports move frames between a peer and a dispatcher: stdio, HTTP (Streamable and legacy SSE), memory."""

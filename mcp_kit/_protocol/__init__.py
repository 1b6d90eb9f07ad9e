"""Internal: see docs/ARCHITECTURE.md."""

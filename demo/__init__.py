"""The quickstart demo: a scripted client session against the three reference servers (run: bin/demo)."""

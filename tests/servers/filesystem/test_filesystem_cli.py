"""The command line of `python -m servers.filesystem`."""

from __future__ import annotations

from pathlib import Path

import pytest

from servers.filesystem.__main__ import main, parse_args


def test_roots_positional_and_repeated(tmp_path: Path) -> None:
    args, roots = parse_args(["a", "--root", "b", "--root", "c", "--read-only", "--max-read-bytes", "10",
                              "--audit-log", "log.jsonl", "--transport", "stdio"])
    assert roots == ["a", "b", "c"]
    assert args.read_only is True and args.confirm_writes is False
    assert args.max_read_bytes == 10 and args.audit_log == "log.jsonl" and args.transport == "stdio"


def test_at_least_one_root_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args([])
    assert exited.value.code == 2
    assert "at least one allowed directory" in capsys.readouterr().err


def test_missing_root_stops_before_serving(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="does not exist or is not a directory"):
        main(["--root", str(tmp_path / "missing")])


def test_an_audit_log_inside_an_allowed_directory_is_refused(tmp_path) -> None:
    from servers.filesystem.server import build_server

    with pytest.raises(ValueError, match="outside the allowed directories"):
        build_server([tmp_path], audit_log=str(tmp_path / "audit.jsonl"))
    assert build_server([tmp_path / "."], audit_log=str(tmp_path.parent / f"{tmp_path.name}-audit.jsonl"))

"""Tool and prompt arguments from the command line: `key=value` pairs or one JSON object."""

from __future__ import annotations

import json
from typing import Any

from .exit_codes import CommandError


def parse_value(text: str) -> Any:
    """JSON when it parses (3, true, null, [..], {..}, "quoted"), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_pairs(pairs: list[str], *, as_json: bool = True) -> dict[str, Any]:
    """`["a=1", "b=x"]` -> `{"a": 1, "b": "x"}`; with `as_json=False` every value stays a string."""
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CommandError(f"expected key=value, got {pair!r}")
        arguments[key] = parse_value(value) if as_json else value
    return arguments


def parse_object(text: str) -> dict[str, Any]:
    """A JSON object given on the command line."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise CommandError(f"the arguments are not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise CommandError(f"the arguments must be a JSON object, got {type(value).__name__}")
    return value


def collect(pairs: list[str], json_text: str | None, *, as_json: bool = True) -> dict[str, Any]:
    """The arguments from a JSON object and/or pairs (pairs win on the same key)."""
    arguments = parse_object(json_text) if json_text is not None else {}
    arguments.update(parse_pairs(pairs, as_json=as_json))
    return arguments


def json_after_flag(argv: list[str]) -> list[str]:
    """Rewrite `--json '{...}'` (arguments in JSON) as `--args '{...}' --json` for argparse."""
    out: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--json" and index + 1 < len(argv) and argv[index + 1].lstrip().startswith("{"):
            out += ["--args", argv[index + 1], "--json"]
            index += 2
            continue
        out.append(token)
        index += 1
    return out

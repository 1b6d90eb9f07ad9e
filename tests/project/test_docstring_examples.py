"""The examples in public docstrings do what they say: each is run as written."""

from __future__ import annotations

import re
import textwrap
from typing import Any

import pytest

import mcp_kit.testing

pytestmark = pytest.mark.anyio


async def test_the_testing_module_docstring_runs_as_written() -> None:
    doc = mcp_kit.testing.__doc__ or ""
    block = textwrap.dedent("\n".join(re.findall(r"^    .*$|^$", doc.split("\n\n", 1)[1].split("\n\nMessages")[0],
                                                 re.M)))
    namespace: dict[str, Any] = {}
    source = ("from mcp_kit import MCPServer\nfrom mcp_kit.testing import connect\n\nasync def example():\n"
              + textwrap.indent(block, "    "))
    exec(compile(source, "mcp_kit/testing.py[docstring]", "exec"), namespace)
    await namespace["example"]()  # its assert holds
    assert 'assert result["content"][0]["text"] == "3"' in block

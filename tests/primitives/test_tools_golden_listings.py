"""Golden: what clients see of the reference servers' tools is what main served before lazy schemas.

Tool schemas, descriptions and argument models are built when first needed instead of
at registration; the listings (every page, every protocol version, cursors included, key order as
on the wire) and the validation messages for bad arguments must stay exactly what they were.
`tests/helpers/tool_listings.py` says how the fixture was made and how to regenerate it.
"""

from __future__ import annotations

import json

from tests.helpers.tool_listings import FIXTURE, collect, dump


def test_tool_listings_and_refusals_are_unchanged() -> None:
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))
    actual = collect()
    assert sorted(actual) == sorted(expected)
    for app in expected:  # one app at a time, so a failure names it
        for part in expected[app]:
            assert actual[app][part] == expected[app][part], f"{app}: {part} changed"
    assert dump(actual) == FIXTURE.read_text(encoding="utf-8")  # byte for byte, key order included

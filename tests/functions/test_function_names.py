"""Function names across several servers: valid for each vendor, unique, independent of order, reversible."""

from __future__ import annotations

import random
import string

import pytest

from mcp_kit.functions import ANTHROPIC_NAMES, GEMINI_NAMES, OPENAI_NAMES, NameMap, NameRules

ALL_RULES = [OPENAI_NAMES, ANTHROPIC_NAMES, GEMINI_NAMES]


def test_unique_valid_names_are_kept() -> None:
    names = NameMap([("stock", "get_stock_price"), ("weather", "get_weather")], OPENAI_NAMES)
    assert names.names == ["get_stock_price", "get_weather"]
    assert names.resolve("get_weather") == ("weather", "get_weather")


def test_a_name_on_two_servers_gets_the_server_as_prefix_on_both() -> None:
    names = NameMap([("stock", "search"), ("weather", "search"), ("stock", "quote")], OPENAI_NAMES)
    assert names.names == ["stock__search", "weather__search", "quote"]
    assert names.resolve("weather__search") == ("weather", "search")
    assert names.resolve("search") is None  # ambiguous: the model must use a listed name
    always = NameMap([("stock", "quote")], OPENAI_NAMES, prefix="always")
    assert always.names == ["stock__quote"]


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda rules: rules.vendor)
def test_forbidden_characters_and_long_names(rules: NameRules) -> None:
    long_name = "describe_" + "very_" * 30 + "long_tool"
    names = NameMap([("fs", "files/read"), ("fs", "9lives"), ("fs", long_name), ("my server", "tool")], rules,
                    prefix="always")
    for exported in names.names:
        assert rules.is_valid(exported), exported
    assert names.exported("fs", "files/read") == "fs__files_read"
    assert names.exported("my server", "tool") == "my_server__tool"
    shortened = names.exported("fs", long_name)
    assert len(shortened) <= rules.max_length and shortened.startswith("fs__describe_very_")
    assert names.resolve(shortened) == ("fs", long_name)


def test_vendor_rules_differ() -> None:
    assert NameMap([("s", "a.b")], OPENAI_NAMES).names == ["a_b"]
    assert NameMap([("s", "a.b")], GEMINI_NAMES).names == ["a.b"]  # Gemini allows dots
    assert NameMap([("s", "9lives")], OPENAI_NAMES).names == ["9lives"]
    assert NameMap([("s", "9lives")], GEMINI_NAMES).names == ["_9lives"]  # Gemini: a letter or _ first
    name_100 = "t" * 100
    assert NameMap([("s", name_100)], ANTHROPIC_NAMES).names == [name_100]  # Anthropic allows 128
    assert len(NameMap([("s", name_100)], OPENAI_NAMES).names[0]) == 64


def test_names_that_collide_after_cleaning_get_distinct_hashes() -> None:
    names = NameMap([("s", "a.b"), ("s", "a_b"), ("s", "a b")], OPENAI_NAMES)
    assert len(set(names.names)) == 3
    assert all(name.startswith("a_b_") and len(name) == 3 + 1 + 8 for name in names.names)
    for server, tool in [("s", "a.b"), ("s", "a_b"), ("s", "a b")]:
        assert names.resolve(names.exported(server, tool)) == (server, tool)


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda rules: rules.vendor)
def test_random_tool_sets_get_valid_unique_order_independent_reversible_names(rules: NameRules) -> None:
    generator = random.Random(17)
    alphabet = string.ascii_letters + string.digits + "_-./: é"
    for _ in range(200):
        servers = [generator.choice(["stock", "weather", "fs", "a" * 70, "x.y"]) for _ in range(3)]
        pairs = list(
            dict.fromkeys(
                (server, "".join(generator.choice(alphabet) for _ in range(generator.randint(1, 90))))
                for server in servers
                for _ in range(generator.randint(1, 6))
            )
        )
        pairs += [(servers[0], "shared"), (servers[-1], "shared")]
        pairs = list(dict.fromkeys(pairs))
        names = NameMap(pairs, rules)
        shuffled = NameMap(generator.sample(pairs, len(pairs)), rules)
        assert len(set(names.names)) == len(pairs)
        for pair in pairs:
            exported = names.exported(*pair)
            assert rules.is_valid(exported), exported
            assert names.resolve(exported) == pair
            assert shuffled.exported(*pair) == exported  # the same tools give the same names in any order

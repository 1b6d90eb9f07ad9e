"""The 2020-12 metaschema as one document (mcp_kit.functions._metaschema) judges every document as the
published eight do: the same errors, at the same places, with the same best match (what `inspect_schema`
reports), on valid schemas and on documents whose keywords hold any JSON value at all. Only the count of
one error may differ: a subschema that is neither an object nor a boolean breaks the `type` of each of
the eight published documents, and of the one union once."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import best_match  # type: ignore[import-untyped]
from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]

from mcp_kit.functions._metaschema import checker_for, union_metaschema
from tests.helpers.schema_corpus import INEXPRESSIBLE, corpus

PUBLISHED = Draft202012Validator(Draft202012Validator.META_SCHEMA, registry=REGISTRY,
                                 format_checker=Draft202012Validator.FORMAT_CHECKER)
UNION = checker_for(Draft202012Validator)
KEYWORDS = sorted({*union_metaschema()["properties"], "x-vendor"})  # type: ignore[index]

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2, allow_nan=False),
              st.sampled_from(["", "string", "object", "#", "#/$defs/a", "http://x/y#z", "(", "date-time", "1a"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYWORDS), inner, max_size=3)),
    max_leaves=15)
documents = st.dictionaries(st.sampled_from(KEYWORDS), json_values, max_size=6)


def judged(checker: Any, document: Any) -> tuple[list[tuple[str, str, str]], str | None]:
    errors = sorted({(repr(list(error.absolute_path)), error.validator, error.message)
                     for error in checker.iter_errors(document)})
    best = best_match(checker.iter_errors(document))
    return errors, None if best is None else best.message


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(document=documents)
def test_any_document_is_judged_as_the_published_metaschema_judges_it(document: dict[str, Any]) -> None:
    assert judged(UNION, document) == judged(PUBLISHED, document)


@pytest.mark.parametrize("name", [*corpus(), *INEXPRESSIBLE])
def test_the_corpus_schemas_are_judged_alike(name: str) -> None:
    schema = corpus()[name][0] if name in corpus() else INEXPRESSIBLE[name][0]
    assert judged(UNION, schema) == judged(PUBLISHED, schema)


def test_another_draft_is_checked_against_its_own_metaschema() -> None:
    checker = checker_for(Draft7Validator)
    assert checker.schema is Draft7Validator.META_SCHEMA
    assert [error.message for error in checker.iter_errors({"minLength": -1})] == ["-1 is less than the minimum of 0"]


def test_the_union_is_faster_on_a_wide_schema() -> None:
    """What it is for (no timing is asserted on the outcome of a test but this ratio, with a wide margin)."""
    wide = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(300)}}
    spent = []
    for checker in (PUBLISHED, UNION):
        started = time.process_time()
        assert list(checker.iter_errors(wide)) == []
        spent.append(time.process_time() - started)
    assert spent[1] < spent[0] / 2, spent

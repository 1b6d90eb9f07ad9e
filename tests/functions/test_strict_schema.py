"""OpenAI strict mode: the converter's output follows strict mode's rules for every tricky schema, keeps
its meaning (arguments a strict model sends map back to the original arguments), and names the JSON
Pointer of whatever cannot be expressed."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mcp_kit.functions import ArgumentChecker, StrictSchemaError, check_strict_limits, to_strict_schema
from tests.helpers.schema_corpus import INEXPRESSIBLE, MODELS, corpus
from tests.helpers.strict_rules import strict_violations

CORPUS = corpus()


def resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        ref = node["$ref"]
        node = root if ref == "#" else root["$defs"][ref.split("/")[-1]]
    return node


def as_strict_model_sends(value: Any, node: dict[str, Any], root: dict[str, Any]) -> Any:
    """What a model bound by the strict schema sends to mean `value`: every property present, null if unset."""
    node = resolve(node, root)
    if "anyOf" in node:
        for branch in node["anyOf"]:
            candidate = as_strict_model_sends(value, branch, root)
            if Draft202012Validator(root).evolve(schema=branch).is_valid(candidate):
                return candidate
        return value
    if isinstance(value, dict) and "properties" in node:
        return {key: as_strict_model_sends(value[key], schema, root) if key in value else None
                for key, schema in node["properties"].items()}
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        return [as_strict_model_sends(item, node["items"], root) for item in value]
    return value


@pytest.mark.parametrize("name", list(CORPUS))
def test_converted_schema_follows_the_strict_mode_rules(name: str) -> None:
    schema, _ = CORPUS[name]
    before = copy.deepcopy(schema)
    strict = to_strict_schema(schema)
    assert strict_violations(strict) == [], json.dumps(strict, indent=1)
    assert schema == before, "the converter must not change its input"
    Draft202012Validator.check_schema(strict)


@pytest.mark.parametrize("name", list(CORPUS))
def test_strict_arguments_map_back_to_the_original_arguments(name: str) -> None:
    schema, samples = CORPUS[name]
    strict = to_strict_schema(schema)
    checker = ArgumentChecker(schema)
    for sample in samples:
        sent = as_strict_model_sends(sample, strict, strict)
        assert Draft202012Validator(strict).is_valid(sent), (sent, list(Draft202012Validator(strict).iter_errors(sent)))
        restored = checker.check(sent)
        if name in MODELS:  # an explicit null equal to the default may come back left out: same model
            model = MODELS[name][0]
            assert model.model_validate(restored) == model.model_validate(sample)
        else:
            assert restored == sample


def test_optional_properties_become_required_and_nullable_with_the_default_described() -> None:
    strict = to_strict_schema(MODELS["nested"][0].model_json_schema())
    nickname = strict["properties"]["nickname"]
    assert nickname["type"] == ["string", "null"]
    assert nickname["description"] == 'What friends call them. Default: "none". null: use the default.'
    assert "title" not in json.dumps(strict)
    name = strict["properties"]["name"]
    assert name == {"type": "string", "description": "1 to 40 characters."}
    tags = strict["properties"]["tags"]  # already nullable (default null): null keeps its own meaning
    assert {"type": "null"} in tags["anyOf"] and tags["description"] == "Optional: null leaves it out."
    address = strict["$defs"]["Address"]
    assert address["required"] == ["street", "city", "zip"] and address["additionalProperties"] is False


def test_unions_enums_and_constants() -> None:
    strict = to_strict_schema(MODELS["unions_and_enums"][0].model_json_schema())
    shapes = strict["properties"]["shapes"]["items"]
    assert shapes == {"anyOf": [{"$ref": "#/$defs/Circle"}, {"$ref": "#/$defs/Square"}]}  # oneOf -> anyOf
    assert strict["$defs"]["Square"]["properties"]["side"] == {"type": "number", "minimum": 0, "multipleOf": 0.5}
    background = strict["properties"]["background"]  # a $ref with a default: inlined to carry the description
    assert background["anyOf"][0] == {"type": "string", "enum": ["red", "green"]}
    assert background["description"] == 'Default: "green". null: use the default.'
    assert "Color" not in strict["$defs"]
    level = strict["properties"]["level"]
    assert {"$ref": "#/$defs/Level"} in level["anyOf"] and {"type": "null"} in level["anyOf"]
    version = strict["properties"]["version"]
    assert {"type": "integer", "const": 2} in version["anyOf"]
    assert strict["properties"]["value"]["anyOf"][:2] == [{"type": "integer"}, {"type": "string"}]


def test_recursion_stays_a_reference_and_a_described_reference_is_inlined() -> None:
    strict = to_strict_schema(MODELS["recursive"][0].model_json_schema())
    node = strict["$defs"]["Node"]
    assert node["properties"]["children"]["anyOf"][0] == {"type": "array", "items": {"$ref": "#/$defs/Node"}}
    assert node["properties"]["parent_hint"]["anyOf"][0] == {"$ref": "#/$defs/Node"}
    root = strict["properties"]["root"]  # {"$ref", "description"} in the input: nothing may sit beside $ref
    assert root["description"] == "The top node" and root["properties"]["value"] == {"type": "integer"}
    draft07 = to_strict_schema(CORPUS["draft07_definitions"][0])
    assert draft07["properties"]["from"] == {"$ref": "#/$defs/Point"} and set(draft07["$defs"]) == {"Point"}
    assert draft07["properties"]["to"]["description"] == "Where to go"
    pointer = to_strict_schema(CORPUS["pointer_ref_and_root_recursion"][0])
    assert pointer["properties"]["sub"]["anyOf"][0] == {"$ref": "#"}
    assert pointer["$defs"]["properties_name"] == {"type": "string"}


def test_unsupported_keywords_move_into_the_description() -> None:
    strict = to_strict_schema(CORPUS["allof_and_type_lists"][0])
    text = strict["properties"]["free_text"]
    assert text["type"] == ["string", "null"] and "format" not in text and "minLength" not in text
    assert (
        text["description"]
        == 'Example: "https://a.b". Format: uri. At least 3 characters. Optional: null leaves it out.'
    )
    assert "Items must be unique." in strict["properties"]["unique"]["description"]
    both = strict["properties"]["both"]
    assert both["required"] == ["a", "b"] and both["properties"]["b"]["type"] == ["integer", "null"]
    assert strict["properties"]["obj_or_null"]["anyOf"][1] == {"type": "null"}


def test_formats_strict_mode_supports_are_kept() -> None:
    strict = to_strict_schema(MODELS["formats_and_optional_arrays"][0].model_json_schema())
    assert strict["properties"]["when"] == {"type": "string", "format": "date-time"}
    assert strict["properties"]["id"] == {"type": "string", "format": "uuid"}
    assert strict["properties"]["ratio"]["type"] == ["number", "null"]
    assert strict["properties"]["ratio"]["exclusiveMinimum"] == 0


@pytest.mark.parametrize("name", list(INEXPRESSIBLE))
def test_what_strict_mode_cannot_express_is_an_error_naming_its_pointer(name: str) -> None:
    schema, pointer = INEXPRESSIBLE[name]
    with pytest.raises(StrictSchemaError) as caught:
        to_strict_schema(schema)
    assert caught.value.pointer == pointer
    assert str(caught.value).startswith(f"#{pointer}: " if pointer else "the root of the input schema: ")


def test_limits_nesting_depth() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"leaf": {"type": "string"}}, "required": ["leaf"]}
    for _ in range(10):
        schema = {"type": "object", "properties": {"next": schema}, "required": ["next"]}
    with pytest.raises(StrictSchemaError, match="11 levels deep") as caught:
        to_strict_schema(schema)
    assert caught.value.pointer == "/properties/next" * 10
    to_strict_schema(schema["properties"]["next"])  # 10 levels pass


def test_limits_property_count_enum_values_and_characters() -> None:
    wide = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(5001)}}
    with pytest.raises(StrictSchemaError, match="5001 object properties"):
        to_strict_schema(wide)
    enums = {"type": "object", "properties": {f"e{i}": {"enum": list(range(100))} for i in range(11)}}
    with pytest.raises(StrictSchemaError, match="1100 enum values"):
        to_strict_schema(enums)
    long_enum = {"type": "object", "properties": {"e": {"enum": [f"{i:03d}" + "x" * 60 for i in range(251)]}}}
    with pytest.raises(StrictSchemaError, match="251 values") as caught:
        to_strict_schema(long_enum)
    assert caught.value.pointer == "/properties/e/anyOf/0"
    chars = {"type": "object", "properties": {f"{i:04d}" + "n" * 200: {"type": "string", "const": "c" * 100}
                                              for i in range(450)}}
    with pytest.raises(StrictSchemaError, match="characters"):
        check_strict_limits(to_strict_schema({**chars, "required": list(chars["properties"])[:1]}))

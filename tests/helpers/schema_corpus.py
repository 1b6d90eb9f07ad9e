"""Tricky tool input schemas: pydantic models (nested, unions, enums, optional arrays, recursion, $defs) and
hand-written JSON Schema (draft-07 `definitions`, pointer references, root recursion, allOf), each with
argument objects a model could send. Also the schemas strict mode cannot express, with the pointer named."""

from __future__ import annotations

import datetime
import enum
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field


class Color(enum.StrEnum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    street: str
    city: str = Field(description="City name")
    zip: str | None = None


class Person(BaseModel):
    """A person with an address."""

    name: Annotated[str, Field(min_length=1, max_length=40)]
    address: Address
    previous: list[Address] = []
    tags: list[str] | None = None
    nickname: str = Field("none", description="What friends call them")


class Circle(BaseModel):
    kind: Literal["circle"] = "circle"
    radius: Annotated[float, Field(gt=0)]


class Square(BaseModel):
    kind: Literal["square"] = "square"
    side: Annotated[float, Field(ge=0, multiple_of=0.5)]


class Drawing(BaseModel):
    shapes: list[Annotated[Circle | Square, Field(discriminator="kind")]]
    background: Color = Color.GREEN
    level: Level | None = None
    mode: Literal["fast", "slow"] = "fast"
    version: Literal[2] = 2
    value: int | str = 0


class Node(BaseModel):
    value: int
    children: list[Node] = []
    parent_hint: Node | None = Field(None, description="A detached copy of the parent")


class Tree(BaseModel):
    root: Node = Field(description="The top node")
    depth: Annotated[int, Field(ge=0, le=100)] | None = None


class Event(BaseModel):
    when: datetime.datetime
    day: datetime.date | None = None
    id: uuid.UUID
    matrix: list[list[float]] = []
    ratio: Annotated[float, Field(gt=0, lt=1)] = 0.5
    labels: Annotated[list[str], Field(min_length=1, max_length=3)] | None = None


MODELS: dict[str, tuple[type[BaseModel], list[dict[str, Any]]]] = {
    "nested": (Person, [
        {"name": "Ada", "address": {"street": "1 Main St", "city": "London"}},
        {"name": "Bob", "address": {"street": "2 Side", "city": "Paris", "zip": "75001"}, "tags": ["a", "b"],
         "previous": [{"street": "old", "city": "Rome", "zip": None}], "nickname": "B"},
    ]),
    "unions_and_enums": (Drawing, [
        {"shapes": [{"kind": "circle", "radius": 1.5}, {"kind": "square", "side": 2.0}]},
        {"shapes": [], "background": "red", "level": 2, "mode": "slow", "version": 2, "value": "x"},
        {"shapes": [{"kind": "square", "side": 0.5}], "level": None, "value": 7},
    ]),
    "recursive": (Tree, [
        {"root": {"value": 1}},
        {"root": {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}], "parent_hint": {"value": 0}},
         "depth": 3},
    ]),
    "formats_and_optional_arrays": (Event, [
        {"when": "2024-01-02T03:04:05Z", "id": "12345678-1234-5678-1234-567812345678"},
        {"when": "2024-01-02T03:04:05Z", "day": "2024-01-02", "id": "12345678-1234-5678-1234-567812345678",
         "matrix": [[1.0, 2.0], []], "ratio": 0.25, "labels": ["x"]},
    ]),
}

# Hand-written schemas, as other MCP servers (TypeScript, Go, hand-rolled) publish them.
HANDWRITTEN: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {
    "draft07_definitions": ({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "definitions": {"Point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                                  "required": ["x", "y"]}},
        "properties": {"from": {"$ref": "#/definitions/Point"}, "to": {"$ref": "#/definitions/Point",
                                                                       "description": "Where to go"},
                       "via": {"type": "array", "items": {"$ref": "#/definitions/Point"}}},
        "required": ["from", "to"],
    }, [{"from": {"x": 0, "y": 0}, "to": {"x": 1, "y": 2}}, {"from": {"x": 0, "y": 0}, "to": {"x": 1, "y": 2},
                                                             "via": [{"x": 5, "y": 5}]}]),
    "pointer_ref_and_root_recursion": ({
        "type": "object",
        "properties": {"name": {"type": "string"}, "alias": {"$ref": "#/properties/name"},
                       "sub": {"$ref": "#"}},
        "required": ["name"],
        "additionalProperties": False,
    }, [{"name": "a"}, {"name": "a", "alias": "b", "sub": {"name": "c", "sub": {"name": "d"}}}]),
    "allof_and_type_lists": ({
        "type": "object",
        "properties": {
            "both": {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                               {"type": "object", "properties": {"b": {"type": "integer"}}}]},
            "maybe": {"type": ["integer", "null"], "minimum": 0},
            "either": {"type": ["string", "integer"]},
            "obj_or_null": {"type": ["object", "null"], "properties": {"k": {"type": "boolean"}}, "required": ["k"]},
            "choice": {"enum": ["x", "y", None]},
            "fixed": {"const": "v1"},
            "free_text": {"type": "string", "format": "uri", "minLength": 3, "examples": ["https://a.b"]},
            "unique": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        },
        "required": ["both"],
    }, [{"both": {"a": "x"}, "maybe": None, "obj_or_null": None, "choice": None},  # null is a value of its own
        {"both": {"a": "x", "b": 1}, "maybe": None, "either": 3, "obj_or_null": {"k": True},
                              "choice": None, "fixed": "v1", "free_text": "https://x", "unique": [1, 2]}]),
    "no_arguments": ({"type": "object"}, [{}]),
    "empty_properties": ({"type": "object", "properties": {}, "additionalProperties": False}, [{}]),
}


def corpus() -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Every schema with its sample arguments (pydantic models dumped as their wire JSON)."""
    out = {name: (model.model_json_schema(), samples) for name, (model, samples) in MODELS.items()}
    out.update(HANDWRITTEN)
    return out


# What strict mode cannot express, and the JSON Pointer the error must name.
INEXPRESSIBLE: dict[str, tuple[dict[str, Any], str]] = {
    "map": (
        {"type": "object", "properties": {"scores": {"type": "object", "additionalProperties": {"type": "integer"}}}},
        "/properties/scores",
    ),
    "free_form_object": ({"type": "object", "properties": {"meta": {"type": "object"}}}, "/properties/meta"),
    "any_value": ({"type": "object", "properties": {"data": {}}}, "/properties/data"),
    "untyped_array": ({"type": "object", "properties": {"rows": {"type": "array"}}}, "/properties/rows"),
    "tuple": (
        {
            "type": "object",
            "properties": {"pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}},
        },
        "/properties/pair",
    ),
    "remote_ref": ({"type": "object", "properties": {"x": {"$ref": "https://example.com/s.json"}}}, "/properties/x"),
    "root_union": (
        {
            "anyOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}},
                {"type": "object", "properties": {"b": {"type": "string"}}},
            ]
        },
        "",
    ),
    "pattern_properties": (
        {
            "type": "object",
            "properties": {"env": {"type": "object", "patternProperties": {"^[A-Z]+$": {"type": "string"}}}},
        },
        "/properties/env",
    ),
    "nested_in_defs": (
        {
            "type": "object",
            "$defs": {"Cfg": {"type": "object", "properties": {"extra": {"type": "object"}}}},
            "properties": {"cfg": {"$ref": "#/$defs/Cfg"}},
        },
        "/$defs/Cfg/properties/extra",
    ),
    "dict_field_from_pydantic": (
        {
            "type": "object",
            "properties": {
                "counts": {"additionalProperties": {"type": "integer"}, "type": "object", "title": "Counts"}
            },
            "required": ["counts"],
        },
        "/properties/counts",
    ),
}

"""Every tool of the three reference servers, and a corpus of tricky schemas, exported in each format and
checked against the vendors' own request types (openai, anthropic, google-genai) and strict mode's rules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator

# The vendors' packages (openai, anthropic, google-genai) are imported by the tests that use them: importing
# them takes seconds, and every pytest process imports every test file.
from mcp_kit.functions import StrictSchemaError, ToolBridge
from tests.helpers.reference_servers import ROOT, servers
from tests.helpers.schema_corpus import INEXPRESSIBLE, corpus
from tests.helpers.strict_rules import strict_violations
from tests.helpers.vendor_types import (
    ANTHROPIC_NAME,
    GEMINI_NAME,
    OPENAI_NAME,
    check_typed,
    gemini_schema_problems,
    gemini_to_json_schema,
)

EXPECTED_TOOLS = {
    "stock": {"get_stock_price", "get_price_history", "get_financial_statement", "compare_valuation", "search_ticker"},
    "weather": {"get_weather", "get_forecast", "get_alerts", "search_location"},
    "filesystem": {"read_text_file", "read_media_file", "read_multiple_files", "write_file", "edit_file",
                   "create_directory", "list_directory", "list_directory_with_sizes", "directory_tree", "move_file",
                   "search_files", "get_file_info", "list_allowed_directories"},
}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ToolBridge]:
    """A bridge over the three reference servers (its tool list outlives the connections)."""
    root = tmp_path_factory.mktemp("sandbox")

    async def collect() -> ToolBridge:
        with anyio.fail_after(60):
            async with ToolBridge.connect(servers(Path(root)), cwd=str(ROOT)) as bridge:
                return bridge

    yield anyio.run(collect)


def corpus_bridge() -> ToolBridge:
    tools = [{"name": f"tool_{name}", "description": f"Corpus schema {name}.", "inputSchema": schema}
             for name, (schema, _) in corpus().items()]
    return ToolBridge({"corpus": object()}, {"corpus": tools})  # type: ignore[dict-item]


def test_the_reference_servers_offer_their_tools(reference: ToolBridge) -> None:
    by_server: dict[str, set[str]] = {}
    for tool in reference.tools:
        by_server.setdefault(tool.server, set()).add(tool.name)
    for server, names in EXPECTED_TOOLS.items():
        assert names <= by_server[server]


@pytest.mark.parametrize("strict", [False, True])
def test_openai_chat_definitions_match_the_openai_types(reference: ToolBridge, strict: bool) -> None:
    from openai.types.chat import ChatCompletionFunctionToolParam
    definitions = reference.openai_tools(strict=strict)
    assert len(definitions) == len(reference.tools) >= 22
    for definition in definitions:
        check_typed(ChatCompletionFunctionToolParam, definition)
        function = definition["function"]
        assert OPENAI_NAME.match(function["name"]) and function["description"]
        if strict:
            assert function["strict"] is True
            assert strict_violations(function["parameters"]) == [], function["name"]
        else:
            assert "strict" not in function and function["parameters"]["type"] == "object"


@pytest.mark.parametrize("strict", [False, True])
def test_openai_responses_definitions_match_the_openai_types(reference: ToolBridge, strict: bool) -> None:
    from openai.types.responses import FunctionToolParam
    for definition in reference.openai_responses_tools(strict=strict):
        check_typed(FunctionToolParam, definition)
        assert set(definition) == {"type", "name", "description", "parameters", "strict"}
        assert definition["strict"] is strict and OPENAI_NAME.match(definition["name"])
        if strict:
            assert strict_violations(definition["parameters"]) == []


def test_anthropic_definitions_match_the_anthropic_types(reference: ToolBridge) -> None:
    from anthropic.types import ToolParam
    for definition in reference.anthropic_tools():
        check_typed(ToolParam, definition)
        assert ANTHROPIC_NAME.match(definition["name"]) and definition["input_schema"]["type"] == "object"
        tool = next(t for t in reference.tools if t.name == definition["name"])
        assert definition["input_schema"] == {k: v for k, v in tool.input_schema.items() if k != "$schema"}


def test_gemini_declarations_match_the_genai_types(reference: ToolBridge) -> None:
    from google.genai import types as genai
    tools = reference.gemini_tools()
    genai.Tool.model_validate(tools[0])  # extra fields are forbidden by google-genai's models
    declarations = tools[0]["functionDeclarations"]
    assert len(declarations) == len(reference.tools)
    for declaration in declarations:
        genai.FunctionDeclaration.model_validate(declaration)
        assert GEMINI_NAME.match(declaration["name"])
        if "parameters" in declaration:
            assert gemini_schema_problems(declaration["parameters"]) == []
    no_arguments = next(d for d in declarations if d["name"] == "list_allowed_directories")
    assert "parameters" not in no_arguments  # Gemini rejects an OBJECT without properties
    edit = next(d for d in declarations if d["name"] == "edit_file")["parameters"]
    assert edit["properties"]["edits"]["items"]["properties"]["oldText"]["type"] == "STRING"  # $ref inlined


def test_request_options_match_the_vendor_types(reference: ToolBridge) -> None:
    from anthropic.types import ToolChoiceParam
    from google.genai import types as genai
    from openai.types.chat import ChatCompletionToolChoiceOptionParam
    from openai.types.responses import ToolChoiceFunctionParam
    chat = reference.request_options("openai", strict=True, tool_choice="get_weather", parallel_tool_calls=False)
    check_typed(ChatCompletionToolChoiceOptionParam, chat["tool_choice"])
    assert chat["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert chat["parallel_tool_calls"] is False and chat["tools"] == reference.openai_tools(strict=True)
    assert reference.request_options("openai", tool_choice="required")["tool_choice"] == "required"
    responses = reference.request_options("openai-responses", tool_choice="stock/compare_valuation")
    check_typed(ToolChoiceFunctionParam, responses["tool_choice"])
    for choice, expected in (("auto", {"type": "auto", "disable_parallel_tool_use": True}),
                             ("required", {"type": "any", "disable_parallel_tool_use": True}),
                             ("write_file", {"type": "tool", "name": "write_file", "disable_parallel_tool_use": True})):
        anthropic = reference.request_options("anthropic", tool_choice=choice, parallel_tool_calls=False)
        check_typed(ToolChoiceParam, anthropic["tool_choice"])
        assert anthropic["tool_choice"] == expected
    gemini = reference.request_options("gemini", tool_choice="get_forecast")
    config = genai.ToolConfig.model_validate(gemini["toolConfig"])
    assert config.function_calling_config is not None
    assert config.function_calling_config.allowed_function_names == ["get_forecast"]
    native = {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": []}}
    assert reference.request_options("openai", tool_choice=native)["tool_choice"] is native  # unchanged
    with pytest.raises(ValueError, match="names no tool"):
        reference.request_options("openai", tool_choice="no_such_tool")
    with pytest.raises(ValueError, match="parallel"):
        reference.request_options("gemini", parallel_tool_calls=False)


def test_corpus_in_every_format() -> None:
    from anthropic.types import ToolParam
    from google.genai import types as genai
    from openai.types.chat import ChatCompletionFunctionToolParam
    from openai.types.responses import FunctionToolParam
    bridge = corpus_bridge()
    for definition in bridge.openai_tools(strict=True):
        check_typed(ChatCompletionFunctionToolParam, definition)
        assert strict_violations(definition["function"]["parameters"]) == []
    for definition in bridge.openai_responses_tools(strict=True):
        check_typed(FunctionToolParam, definition)
    for definition in bridge.anthropic_tools():
        check_typed(ToolParam, definition)
    samples = {f"tool_{name}": cases for name, (_, cases) in corpus().items()}
    for declaration in bridge.gemini_tools()[0]["functionDeclarations"]:
        genai.FunctionDeclaration.model_validate(declaration)
        parameters = declaration.get("parameters")
        if parameters is None:
            assert samples[declaration["name"]] == [{}]
            continue
        assert gemini_schema_problems(parameters) == [], declaration["name"]
        readable = gemini_to_json_schema(parameters)
        for sample in samples[declaration["name"]]:  # nothing valid became inexpressible
            assert Draft202012Validator(readable).is_valid(sample), (declaration["name"], sample)


def test_strict_export_names_the_tool_and_pointer_or_falls_back_per_tool() -> None:
    tools = [{"name": "fine", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}},
             {"name": "scores", "inputSchema": INEXPRESSIBLE["map"][0]}]
    bridge = ToolBridge({"s": object()}, {"s": tools})  # type: ignore[dict-item]
    with pytest.raises(StrictSchemaError) as caught:
        bridge.openai_tools(strict=True)
    assert str(caught.value).startswith("tool 'scores': #/properties/scores: is a map")
    auto = bridge.openai_tools(strict="auto")
    assert auto[0]["function"]["strict"] is True and "strict" not in auto[1]["function"]
    with pytest.raises(ValueError, match="strict mode is OpenAI's"):
        bridge.definitions("anthropic", strict=True)


def test_results_match_the_vendor_message_types() -> None:
    from anthropic.types import MessageParam, ToolResultBlockParam
    from google.genai import types as genai
    from openai.types.chat import ChatCompletionToolMessageParam
    from openai.types.responses.response_input_item_param import FunctionCallOutput

    from mcp_kit.functions import FORMATS, ToolCall, ToolOutcome

    result: dict[str, Any] = {"content": [{"type": "text", "text": "42"},
                                          {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}],
                              "structuredContent": {"answer": 42}, "isError": False}
    outcomes = [ToolOutcome(ToolCall("call_1", "f", "{}"), "42", result=result),
                ToolOutcome(ToolCall("call_2", "g", "{}"), "Unknown tool 'g'.", True, "unknown_tool")]
    for message in FORMATS["openai"].results(outcomes):
        check_typed(ChatCompletionToolMessageParam, message)
    assert FORMATS["openai"].results(outcomes)[1]["content"] == "Error: Unknown tool 'g'."
    for item in FORMATS["openai-responses"].results(outcomes):
        check_typed(FunctionCallOutput, item)
    (user,) = FORMATS["anthropic"].results(outcomes)
    check_typed(MessageParam, user)
    for block in user["content"]:
        check_typed(ToolResultBlockParam, block)
    assert user["content"][0]["content"][1]["type"] == "image" and user["content"][1]["is_error"] is True
    (content,) = FORMATS["gemini"].results(outcomes)
    parsed = genai.Content.model_validate(content)
    assert parsed.parts and parsed.parts[0].function_response is not None
    assert parsed.parts[0].function_response.response == {"output": {"answer": 42}}
    assert content["parts"][1]["functionResponse"]["response"] == {"error": "Unknown tool 'g'."}


def test_calls_are_read_from_vendor_sdk_objects_as_from_plain_json() -> None:
    import json

    from anthropic.types import Message
    from google.genai import types as genai
    from openai.types.chat import ChatCompletion
    from openai.types.responses import Response

    from mcp_kit.functions import FORMATS

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "functions"
    cases = [("openai", ChatCompletion, "openai_chat_parallel_calls.json"),
             ("openai-responses", Response, "openai_responses_parallel_calls.json"),
             ("anthropic", Message, "anthropic_parallel_calls.json"),
             ("gemini", genai.GenerateContentResponse, "gemini_bad_arguments.json")]
    for format_name, sdk_type, fixture in cases:
        data = json.loads((fixtures / fixture).read_text(encoding="utf-8"))
        plain_calls = FORMATS[format_name].calls(data)
        assert len(plain_calls) >= 3 and all(call.id and call.name for call in plain_calls)
        assert FORMATS[format_name].calls(sdk_type.model_validate(data)) == plain_calls

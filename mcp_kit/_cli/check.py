"""`mcp-kit check TARGET`: build every schema, template and prompt of a server and report every problem.

Registration already refuses what is cheap to see (`_primitives/signature.check_signature`, a template's
variables against its function's parameters); the rest (a forward reference that never resolves, an output
type without a schema) shows only when a schema is built. This command imports the server with
registration recording its problems instead of raising the first (`collecting_problems`), then builds
what `tools/list`, `tools/call`, `resources/templates/list` and `prompts/list` would, for each primitive,
and prints one `file:line: problem` line each. Exit status 0 when there is none, 1 otherwise.
"""

from __future__ import annotations

import sys
from typing import Any

from .._primitives.signature import collecting_problems, where
from .._protocol.versions import LATEST_HANDSHAKE
from .exit_codes import OK, TOOL_ERROR
from .loader import load_server


def server_problems(app: Any) -> list[str]:
    """Every problem building `app`'s tools, templates, resources and prompts would meet, one line each."""
    problems: list[str] = []
    for tool in list(app.tools):
        for build in (tool.schema, tool.call_plan, lambda t=tool: t.wire(LATEST_HANDSHAKE)):
            try:
                build()
            except Exception as exc:
                problems.append(_located(exc, tool.fn))
                break
    for entry in [*app.resources.fixed.values(), *app.resources.templates.values()]:
        try:
            entry.definition()
        except Exception as exc:
            problems.append(_located(exc, entry.fn))
    for prompt in list(app.prompts.values()):
        try:
            prompt.definition()
        except Exception as exc:
            problems.append(_located(exc, prompt.fn))
    return problems


def _located(error: BaseException, fn: Any) -> str:
    text = str(error) or type(error).__name__
    place = where(fn)
    return text if text.startswith(place) else f"{place}: {text}"


def check_command(spec: str) -> int:
    """Import the server `spec` names, report each problem on stdout, return the exit status."""
    with collecting_problems() as found:
        app = load_server(spec)
    problems = [str(problem) for problem in found] + server_problems(app)
    for problem in problems:
        print(problem)
    counts = (f"{len(app.tools)} tools, {len(app.resources.fixed)} resources, "
              f"{len(app.resources.templates)} templates, {len(app.prompts)} prompts")
    if problems:
        print(f"mcp-kit check: {len(problems)} problem{'s' if len(problems) != 1 else ''} in {spec} "
              f"(serving {counts} without them)", file=sys.stderr)
        return TOOL_ERROR
    print(f"ok: {spec}: {counts}")
    return OK

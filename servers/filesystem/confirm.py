"""Asking the user before a change (`--confirm-writes`), through elicitation.

Without the client's elicitation capability nothing is changed: the tool says
that confirmation is required and how to get it.
"""

from __future__ import annotations

from mcp_kit import Context, ToolError

from .models import WriteConfirmation

MAX_QUESTION_CHARS = 4000


async def confirm_change(ctx: Context, enabled: bool, question: str) -> None:
    """Return when the change may go ahead; raise `ToolError` when it may not."""
    if not enabled:
        return
    if not ctx.client_supports("elicitation"):
        raise ToolError(
            "Confirmation required: this server was started with --confirm-writes and asks the user "
            "before every write, edit or move, but this client cannot show such questions "
            "(it does not support elicitation). Nothing was changed."
        )
    if len(question) > MAX_QUESTION_CHARS:
        question = question[: MAX_QUESTION_CHARS - 20] + "\n… (preview shortened)"
    answer = await ctx.elicit(question, schema=WriteConfirmation)
    if answer.action != "accept":
        raise ToolError(f"The user did not allow this change ({answer.action}). Nothing was changed.")
    if not (answer.content or {}).get("confirm"):
        raise ToolError("The user did not tick 'confirm'. Nothing was changed.")

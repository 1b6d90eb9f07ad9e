"""MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`): interactive HTML views of tool results.

    from mcp_kit.apps import Apps

    apps = app.add_extension(Apps())

    @apps.view("ui://stock/chart", name="Price chart", prefers_border=True)
    def chart() -> str:
        return CHART_HTML            # one self-contained HTML document (text/html;profile=mcp-app)

    apps.link("get_price_history", "ui://stock/chart")          # rendered by the view; model and app

    @apps.tool(view="ui://stock/chart", visibility=["app"])     # only the view calls it
    async def chart_data(ticker: str, period: str = "1mo") -> dict: ...

A host that declares the extension (`capabilities.extensions["io.modelcontextprotocol/ui"]`) renders a
linked tool's result in the view; any other host gets the same text results as before and never sees
app-only tools. `apps.host_supports(ctx)` tells a handler which kind of host called. `mcp-kit apps
preview SERVER` renders a server's views in a local browser page.
"""

from ._extension import EXTENSION_ID, MIME_TYPE, PERMISSIONS, SPEC_VERSION, Apps, View, ui_meta

__all__ = ["EXTENSION_ID", "MIME_TYPE", "PERMISSIONS", "SPEC_VERSION", "Apps", "View", "ui_meta"]

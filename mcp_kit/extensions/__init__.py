"""Extensions (SEP-2133): add capabilities, methods, notifications and `_meta` to a server, per protocol era.

    from mcp_kit.extensions import Extension, method

    class Greeter(Extension):
        id = "com.example/greeter"                  # vendor-prefix/name

        def settings(self, version):                # capabilities.extensions["com.example/greeter"]
            return {"languages": ["en", "fr"]}

        @method("greeter/hello")                    # served like a core method, through the middleware
        async def hello(self, params, ctx):
            language = (self.client_settings(ctx) or {}).get("language", "en")
            return {"text": {"en": "hello", "fr": "bonjour"}[language]}

    app.add_extension(Greeter())

An extension may also: add core capabilities (`server_capabilities`), handle client notifications
(`@notification`), answer `tools/call` or `resources/read` itself (`call_tool`, `read_resource`), hide
tools from a caller (`tool_visible`), add `_meta` to listed tools and resources (`tool_meta`,
`resource_meta`), and run beside the server (`running`). `client_settings(ctx)` is what the client
declared for it; `require_client(ctx, doing)` refuses with -32021 when it declared nothing. Tasks
(`io.modelcontextprotocol/tasks`), skills (`io.modelcontextprotocol/skills`) and MCP Apps
(`mcp_kit.apps`) are extensions built this way.
"""

from .._app.extension import CORE_METHODS, Extension, method, notification

__all__ = ["CORE_METHODS", "Extension", "method", "notification"]

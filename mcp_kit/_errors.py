"""The root of every exception mcp_kit raises: `MCPKitError`. Imports nothing.

Each layer keeps its classes beside its code; all of them derive from `MCPKitError`, so
`except mcp_kit.MCPKitError` catches anything the library raises on purpose (a few also derive
from the built-in a caller would expect, such as ValueError or TypeError).

    MCPKitError
    ├── JSONRPCError                  _protocol/jsonrpc.py   a JSON-RPC error answer with its code
    │   └── MCPError                  _protocol/errors.py    the same, raised by mcp_kit and user code
    │       ├── ResourceNotFound                             -32002 (handshake era) / -32602 (2026-07-28)
    │       ├── UpstreamUnavailable                          -31001; inside a tool, isError: true
    │       ├── InsufficientScopeError                       -31002 (OAuth scope missing, no HTTP challenge possible)
    │       ├── RateLimited                                  -31003 with retryAfter (a tool: isError; HTTP: 429)
    │       └── SkillNotFound         skills/_errors.py      -32602, an unknown skill:// URI
    ├── EncodeError (ValueError)      _protocol/jsonrpc.py   a value that cannot be written as JSON
    ├── ToolError                     _protocol/errors.py    raised in a tool: isError: true with this message
    ├── DefinitionError (TypeError)   _primitives/signature.py  a function that cannot be served as declared (file:line)
    │   └── ToolDefinitionError       _primitives/tools.py   ... as a tool
    ├── ToolCrashed                   _primitives/tools.py   inside the middleware chain: a tool raised unexpectedly
    ├── MountCollision (ValueError)   _app/mounts.py         two sources for one tool, prompt or resource name
    ├── ProcessPoolError (RuntimeError)  _execution/processes.py  a run_in="process" worker failed
    ├── BackendUnavailable            _backends/base.py      the shared backend (Redis) cannot be reached
    ├── MissingBackendExtra (ImportError)  _backends/__init__.py  --backend redis://... without the redis package
    ├── MissingTelemetryExtra (ImportError)  _telemetry/otel.py  telemetry asked for without mcp-kit-framework[otel]
    ├── StoreLimitExceeded            _backends/base.py      a key-value store write over its bounds
    │   └── StateTooLarge             _app/state.py          a ctx.state write over its bounds
    ├── StateUnavailable              _app/state.py          ctx.user_state without an OAuth caller
    ├── BodyTooLarge, BodyTimeout     _transports/http_security.py  an HTTP body over its size or time
    ├── TaskStoreError                tasks/_store.py        a task store refused or failed
    │   └── TaskLimitReached                                 too many live tasks
    ├── SkillError (ValueError)       skills/_errors.py      skills that cannot be served (every problem listed)
    ├── ScanError (ValueError)        skills/_errors.py      a skill tree over its bounds or unreadable
    ├── FrontmatterError (ValueError)  skills/_errors.py     a SKILL.md whose YAML is invalid
    ├── AuthError                     auth/_errors.py        an HTTP request that must not reach the endpoint
    │   ├── InvalidRequest                                   400 invalid_request
    │   ├── InvalidToken                                     401 invalid_token
    │   ├── StepUpRequired                                   403 insufficient_scope, naming the scopes needed
    │   └── AuthServerUnavailable                            503, the authorization server could not be asked
    ├── MetadataError                 auth/_errors.py        authorization-server metadata unusable
    ├── UpstreamTokenUnavailable      auth/_errors.py        ctx.upstream_token(): no identity-provider token to give
    ├── OAuthRefusal                  auth/_facade.py        the OAuth facade's error answer (error code, description)
    ├── ClientRefused                 auth/_facade_clients.py  a client registration or metadata document refused
    ├── UpstreamSignInError           auth/_facade_upstream.py  the identity provider refused or was unreachable
    ├── ClientError                   client/_errors.py      mcp_kit.client: a server that cannot be reached
    │   ├── ServerNotFound, ConnectionClosed
    │   └── OAuthError                client/oauth/_errors.py  the client's authorization flow failed
    ├── SchemaConversionError (ValueError)  functions/...    a tool schema a model API cannot take
    │   ├── StrictSchemaError, GeminiSchemaError
    ├── ArgumentError (ValueError)    functions/_arguments.py  a model's arguments that fail the schema
    ├── MalformedResponseError (ValueError)  functions/_calls.py  a model response without its format's shape
    └── CommandError                  _cli/exit_codes.py     the mcp-kit command: a message and an exit status
"""

from __future__ import annotations


class MCPKitError(Exception):
    """Base class of every exception mcp_kit raises on purpose."""

"""MCP bridge: serve connected devices' tools as an ordinary MCP server.

Any MCP client (desktop assistants, IDEs, the official SDKs) can list and call the tools
of one or many devices through it, over stdio or Streamable HTTP. See docs/bridge.md.
"""

from mcpgen.extras import missing_extra

try:  # the official MCP SDK, uvicorn, h11, jsonschema: the `bridge` extra
    from .core import Bridge, Session, tool_error
    from .device import DeviceLike, ToolInfoLike
    from .http import StreamableHttpApp, serve_http
    from .names import ToolKey, ToolNameMap, device_prefix, safe_tool_name
    from .protocol import LEGACY_VERSIONS, MODERN_VERSIONS, SUPPORTED_VERSIONS
    from .stdio import StdioServer, serve_stdio
except ModuleNotFoundError as exc:
    raise missing_extra(exc, "the MCP bridge") from None

__all__ = [
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "SUPPORTED_VERSIONS",
    "Bridge",
    "DeviceLike",
    "Session",
    "StdioServer",
    "StreamableHttpApp",
    "ToolInfoLike",
    "ToolKey",
    "ToolNameMap",
    "device_prefix",
    "safe_tool_name",
    "serve_http",
    "serve_stdio",
    "tool_error",
]

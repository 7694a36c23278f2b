"""The bridge as an MCP SDK low-level ``Server``.

The official SDK (``mcp``) does the protocol work: JSON-RPC dispatch, the ``initialize``
handshake and version negotiation (2024-11-05 to 2025-11-25), the stateless 2026-07-28
era (``server/discover``, the ``_meta`` envelope, ``-32022`` for unknown versions, the
``serverInfo`` stamp, ``ttlMs``/``cacheScope`` from cache hints), per-version result
shaping, ``ping``, and ``notifications/cancelled`` (it cancels the handler, which
cancels the forwarded device call). The handlers here only map MCP methods onto the
:class:`~.core.Bridge`'s device logic: the tool table (prefixes, user-only hiding, safe
names), forwarding with progress, the events and device resources, completions of
template variables and per-client log levels.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from mcp import types
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

from .core import Bridge, Session
from .events import device_of
from .protocol import LEGACY_VERSIONS, MODERN_VERSIONS, RpcFailure

log = logging.getLogger("mcpgen.runtime.bridge.sdk")

Ctx = ServerRequestContext[Any, Any]
Handler = Callable[[Ctx, Any], Awaitable[Any]]
"""An SDK request handler returning a plain result dict (the runner validates and
shapes it per protocol version; its signatures name the typed results)."""


def _raw(ctx: Ctx) -> dict[str, Any]:
    """The request's params as sent: the bridge's logic reads ``_meta`` and unknown keys."""
    return dict(ctx.params or {})


def _sdk_errors(handler: Callable[[Ctx], Awaitable[dict[str, Any]]]) -> Handler:
    """Adapt a bridge call to an SDK handler: :class:`RpcFailure` becomes ``MCPError``."""

    async def wrapped(ctx: Ctx, _params: Any) -> Any:
        try:
            result = await handler(ctx)
        except RpcFailure as failure:
            raise MCPError(failure.code, failure.message, failure.data) from None
        if ctx.protocol_version in MODERN_VERSIONS:
            # The SDK validates a dict result against the 2026-07-28 shape, which
            # requires this key (it fills it itself only for typed results).
            result.setdefault("resultType", "complete")
        return result

    return wrapped


def _typed_notification(message: dict[str, Any]) -> types.ServerNotification:
    """One of the bridge's notification dicts as the SDK's typed notification."""
    return types.server_notification_adapter.validate_python(message, by_name=False)


class SdkConnection:
    """The bridge's per-client :class:`Session` for one SDK connection.

    The SDK's standalone channel (``ServerSession.send_notification`` without a related
    request) carries what the bridge pushes on its own: ``tools/list_changed``, device
    events as log messages, ``resources/updated``. The bridge pushes only to sessions
    with a handshake version, which is set once the client's ``initialized`` arrives.
    """

    def __init__(self, bridge: Bridge, transport: str) -> None:
        self.bridge = bridge
        self.session: Session = bridge.new_session(transport, push=self._push)
        self._sdk_session: ServerSession | None = None
        # 2026-07-28 ``subscriptions/listen`` streams: the SDK's handler, fed from the
        # bridge's tool-table and device-event callbacks through the SDK's bus.
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._unsubscribe = [
            bridge.on_tools_changed(lambda: self._publish(ToolsListChanged())),
            bridge.on_device_event(lambda uri: self._publish(ResourceUpdated(uri))),
        ]

    def _publish(self, event: ToolsListChanged | ResourceUpdated) -> None:
        self.bridge.spawn(self.bus.publish(event))

    def seen(self, ctx: Ctx) -> None:
        self._sdk_session = ctx.session
        if ctx.protocol_version in LEGACY_VERSIONS and ctx.method != "initialize":
            self.session.protocol_version = ctx.protocol_version

    def negotiated(self, result: Any) -> None:
        """An HTTP session is pushed to from its ``initialize`` answer on: its GET
        stream (or the event store, for a later ``Last-Event-ID``) may open before
        ``notifications/initialized`` is sent."""
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if version in LEGACY_VERSIONS:
            self.session.protocol_version = version

    async def _push(self, message: dict[str, Any]) -> None:
        if self._sdk_session is None:
            return
        try:
            await self._sdk_session.send_notification(_typed_notification(message))
        except Exception as exc:  # a client gone mid-send: nothing to deliver to
            log.debug("dropping %s: %s", message.get("method"), exc)

    def close(self) -> None:
        for undo in self._unsubscribe:
            undo()
        self.listen.close()
        self.bridge.close_session(self.session)


CONNECTION_SCOPE_KEY = "mcpgen.bridge.connection"
"""Where the HTTP guard puts a session's :class:`SdkConnection` in the ASGI scope."""


class _BridgeServer(Server[Any]):
    """The SDK's ``Server``, announcing ``tools.listChanged`` by default: the session
    manager builds each session's ``initialize`` answer from the default options."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


def build_server(bridge: Bridge, shared: SdkConnection) -> Server[Any]:
    """A low-level SDK ``Server`` whose handlers are the bridge's.

    ``shared`` serves stdio and stateless 2026-07-28 requests. A handshake-era
    Streamable HTTP session has its own :class:`SdkConnection` (its log level,
    subscriptions and pushed notifications are its own). The session manager shares
    this one ``Server`` between sessions and shows a handler its HTTP request, so the
    guard (``http.py``), which tracks sessions, hands each request its session's
    connection in the ASGI scope.
    """

    def connection_of(ctx: Ctx) -> SdkConnection:
        scope = getattr(ctx.request, "scope", None)
        own = scope.get(CONNECTION_SCOPE_KEY) if isinstance(scope, dict) else None
        return own if isinstance(own, SdkConnection) else shared

    async def list_tools(ctx: Ctx) -> dict[str, Any]:
        return bridge.tools_list(_raw(ctx), ctx.protocol_version)

    async def call_tool(ctx: Ctx) -> dict[str, Any]:
        async def emit(message: dict[str, Any]) -> None:
            # progress for this request rides the request's own channel
            typed = _typed_notification(message)
            await ctx.session.send_notification(typed, related_request_id=ctx.request_id)

        return await bridge.tools_call(_raw(ctx), emit, ctx.protocol_version)

    async def resources(ctx: Ctx) -> dict[str, Any]:
        return await bridge.resources_request(ctx.method, _raw(ctx))

    async def subscribe(ctx: Ctx) -> dict[str, Any]:
        return await bridge.subscribe_request(connection_of(ctx).session, ctx.method, _raw(ctx))

    async def prompts(ctx: Ctx) -> dict[str, Any]:
        return bridge.prompts_request(ctx.method, _raw(ctx))

    async def complete(ctx: Ctx) -> dict[str, Any]:
        return await bridge.complete(_raw(ctx))

    async def set_level(ctx: Ctx) -> dict[str, Any]:
        return bridge.set_level(connection_of(ctx).session, _raw(ctx))

    def input_schema(name: str) -> dict[str, Any] | None:
        # for the SDK's Mcp-Param-* header checks (2026-07-28 HTTP), without a tools/list per call
        resolved = bridge.resolve(name)
        return dict(resolved[1].input_schema) if resolved is not None else None

    async def listen(ctx: Ctx, params: types.SubscriptionsListenRequestParams) -> Any:
        # The SDK's handler grants every kind asked for; the bridge has only tool-list
        # changes and device events resources, so it grants those alone (and says so
        # in the acknowledgement).
        wanted = params.notifications
        uris = [u for u in wanted.resource_subscriptions or () if device_of(u) is not None]
        granted = types.SubscriptionFilter(
            tools_list_changed=True if wanted.tools_list_changed else None,
            resource_subscriptions=uris or None,
        )
        return await connection_of(ctx).listen(ctx, params.model_copy(update={"notifications": granted}))

    with warnings.catch_warnings():
        # Handshake-era clients get device events as log messages (docs/bridge.md), so
        # the bridge keeps the logging capability the SDK marks deprecated at 2026-07-28.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server: Server[Any] = _BridgeServer(
            str(bridge.server_info["name"]),
            version=str(bridge.server_info["version"]),
            instructions=bridge.instructions,
            get_tool_input_schema=input_schema,
            # 2026-07-28 requires these on cacheable results; a device's events change
            # with every event, so a read is never fresh for long.
            cache_hints={
                "tools/list": CacheHint(ttl_ms=bridge.list_ttl_ms, scope="private"),
                "resources/list": CacheHint(ttl_ms=bridge.list_ttl_ms, scope="private"),
                "resources/templates/list": CacheHint(ttl_ms=bridge.list_ttl_ms, scope="private"),
                "resources/read": CacheHint(ttl_ms=0, scope="private"),
            },
            on_list_tools=_sdk_errors(list_tools),
            on_call_tool=_sdk_errors(call_tool),
            on_list_resources=_sdk_errors(resources),
            on_list_resource_templates=_sdk_errors(resources),
            on_read_resource=_sdk_errors(resources),
            on_subscribe_resource=_sdk_errors(subscribe),
            on_unsubscribe_resource=_sdk_errors(subscribe),
            on_set_logging_level=_sdk_errors(set_level),
            on_completion=_sdk_errors(complete),
            # a bridge without prompts (no --spec with `prompts:`) does not announce them
            on_list_prompts=_sdk_errors(prompts) if bridge.prompts else None,
            on_get_prompt=_sdk_errors(prompts) if bridge.prompts else None,
            on_subscriptions_listen=listen,
        )

    async def track(ctx: Ctx, call_next: Callable[[Ctx], Awaitable[Any]]) -> Any:
        connection = connection_of(ctx)
        connection.seen(ctx)
        result = await call_next(ctx)
        if ctx.method == "initialize" and connection is not shared:
            connection.negotiated(result)
        return result

    server.middleware.append(track)
    return server


def initialization_options(server: Server[Any]) -> InitializationOptions:
    return server.create_initialization_options(NotificationOptions(tools_changed=True))

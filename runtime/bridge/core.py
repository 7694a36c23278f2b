"""The bridge's device logic: devices, the tool table, forwarding, events, sessions.

The MCP protocol itself is served by the official SDK (``sdk_server.py``: stdio, and
Streamable HTTP in both eras behind the guard in ``http.py``), whose handlers call into
:class:`Bridge`. The SDK runs each request in its own task and cancels it on
``notifications/cancelled``; cancelling a forwarded call cancels the device call.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import itertools
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpgen import __version__
from mcpgen.human import human_ask, misplaced, model_schema
from mcpgen.jsonrpc import RESOURCE_NOT_FOUND
from mcpgen.protocol import PROGRESS_META_KEY
from mcpgen.runtime.core.validate import SchemaValidator, unsupported_pattern
from mcpgen.runtime.errors import UnsupportedPattern, ValidationError
from mcpgen.runtime.session.events import event_name

from . import device_resources
from .completion import Completer, TemplateSchemas, events_template_entry
from .device import DeviceLike, ToolInfoLike
from .elicit import Ask, ask_person, no_capability
from .events import EventLog, device_of, events_uri
from .names import ToolKey, ToolNameMap
from .prompts import PromptSet
from .protocol import (
    INVALID_PARAMS,
    META_DEVICE,
    META_DEVICE_TOOL,
    META_PROTOCOL_VERSION,
    METHOD_NOT_FOUND,
    QUOTE_LIMIT,
    RpcFailure,
    clip,
    notification,
    quote,
    version_at_least,
)

log = logging.getLogger("mcpgen.runtime.bridge")

Emit = Callable[[dict[str, Any]], Awaitable[None]]
"""Sends one message to the client on the channel of the request being handled."""

TOOLS_CHANGED = notification("notifications/tools/list_changed")
"""Sent to every MCP client session when a device's tools change."""
LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
"""MCP logging levels (RFC 5424 order, least severe first)."""
MAX_SUBSCRIPTIONS = 1024
"""Resource subscriptions one session may hold (URIs of devices not yet connected count)."""
MAX_GONE_TOOLS = 4096
"""Tools of departed devices remembered (for "device X is not connected" rather than "unknown
tool"); the oldest are forgotten first, so device ids that come and go cannot grow the bridge."""
PROGRESS_FLUSH = 1.0
"""Seconds a call's answer waits for its relayed progress notifications to go out."""
EVENT_LEVEL = "info"
"""The level device events are logged at (a client's ``logging/setLevel`` above it silences them)."""


def _id_key(request_id: Any) -> str:
    """Request ids 1 and "1" are different requests; key them by their JSON text."""
    return json.dumps(request_id, sort_keys=True)


@dataclass
class Session:
    """One client: a stdio process, a handshake-era Streamable HTTP session, or the
    shared state of stateless 2026-07-28 requests (``sdk_server.SdkConnection``)."""

    transport: str
    id: str = field(default_factory=lambda: secrets.token_hex(16))
    protocol_version: str | None = None
    """The version negotiated by ``initialize`` (handshake-era clients only)."""
    push: Emit | None = None
    """Where out-of-band notifications for a legacy client go (stdout, the GET stream)."""
    closed: bool = False
    log_level: str | None = None
    """The least severe level the client wants (``logging/setLevel``); None: every level."""
    subscriptions: set[str] = field(default_factory=set)
    """Resource URIs the client subscribed to (``resources/subscribe``)."""
    resource_routes: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Each subscribed device resource URI, as the client named it -> (device id, the
    device's URI): where its ``notifications/resources/updated`` come from."""

    def wants_level(self, level: str) -> bool:
        if self.log_level is None:
            return True
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level)


@dataclass
class _Entry:
    device: DeviceLike
    tool: ToolInfoLike
    name: str


class Bridge:
    """Serves the tools of one or many devices as one MCP server.

    Args:
        prefix_tools: export ``<device>__<tool>`` names (needed when serving many devices);
            device resource URIs follow the same rule (``device_resources``): as the
            device gave them without it, ``mcpgen://devices/<id>/<uri>`` with it.
        user_tools: also export tools the spec marks user-only.
        device_ids: serve only these devices (None: every device added).
        call_timeout: seconds a forwarded ``tools/call`` may take (None: the runtime's).
        validate_arguments: check arguments against the tool's input schema first (the
            runtime's validator, patterns on RE2), so a bad call is a tool error with a
            precise message and never reaches the device. A tool whose schema has a
            ``pattern`` RE2 cannot run is then not served (logged; a call names why).
        safe_names: export names matching ``^[a-zA-Z0-9_-]{1,64}$`` (see ``names.py``).
        list_ttl_ms: the ``ttlMs`` caching hint on ``tools/list`` for 2026-07-28 clients.
        template_schemas: the JSON Schemas of device resource templates' variables
            (``{device template: {variable: schema}}``), for ``completion/complete``.
        prompts: the prompts of the specs served (``prompts.py``; ``codegen bridge --spec``).
        allow_without_elicitation: a client without the ``elicitation`` capability may call
            tools that ask the person (``elicit.py``): it sees their parameters and the model
            supplies them, unconfirmed. Off: such a call is a tool error naming them.
        human_timeout: seconds the person has to answer an elicitation (None: no limit).
    """

    def __init__(
        self,
        *,
        prefix_tools: bool = False,
        user_tools: bool = False,
        device_ids: Collection[str] | None = None,
        call_timeout: float | None = 30.0,
        validate_arguments: bool = True,
        safe_names: bool = True,
        list_ttl_ms: int = 0,
        server_name: str = "mcpgen-bridge",
        server_version: str = __version__,
        instructions: str | None = None,
        template_schemas: TemplateSchemas | None = None,
        prompts: Iterable[Mapping[str, Any]] = (),
        allow_without_elicitation: bool = False,
        human_timeout: float | None = 600.0,
    ) -> None:
        self.prefix_tools = prefix_tools
        self.user_tools = user_tools
        self.device_ids = frozenset(device_ids) if device_ids else None
        self.call_timeout = call_timeout
        self.validate_arguments = validate_arguments
        self.safe_names = safe_names
        self.list_ttl_ms = list_ttl_ms
        self.server_info = {"name": server_name, "version": server_version}
        self.instructions = instructions
        self.prompts = PromptSet(prompts)
        self.completer = Completer(template_schemas, self.prompts)
        self.allow_without_elicitation = allow_without_elicitation
        self.human_timeout = human_timeout
        self.devices: dict[str, DeviceLike] = {}
        self._unsubscribe: dict[str, Callable[[], None]] = {}
        self._entries: dict[str, _Entry] = {}
        self._order: list[str] = []
        self._gone: dict[str, str] = {}
        self._listeners: list[Callable[[], None]] = []
        self._event_listeners: list[Callable[[str], None]] = []
        self.events = EventLog()
        self._sessions: dict[str, Session] = {}
        self._progress: dict[str, tuple[Emit, Any]] = {}
        self._progress_ids = itertools.count(1)
        self._progress_sends: dict[str, set[asyncio.Future[Any]]] = {}
        self._device_calls: dict[str, set[asyncio.Task[Any]]] = {}
        self._validators: dict[tuple[str, str], SchemaValidator | UnsupportedPattern] = {}
        self._refused: dict[str, str] = {}
        """Exported name -> why the tool is not served (a pattern RE2 cannot run)."""
        self._background: set[asyncio.Task[Any]] = set()
        self.timeout_slack = 5.0
        """Seconds past ``call_timeout`` after which the bridge gives up on a call itself."""

    # ------------------------------------------------------------------ devices

    def wants(self, device_id: str) -> bool:
        return self.device_ids is None or device_id in self.device_ids

    def add_device(self, device: DeviceLike) -> bool:
        """Serve a device's tools (False if ``device_ids`` excludes it)."""
        device_id = device.device_id
        if device.closed:
            return False
        if not self.wants(device_id):
            log.info("ignoring device %s (not selected)", device_id)
            return False
        if device_id in self.devices and self.devices[device_id] is not device:
            self.remove_device(device_id)
        self.devices[device_id] = device
        notify = functools.partial(self._on_device_notification, device)
        self._unsubscribe[device_id] = device.on_notification(notify)
        on_close = getattr(device, "on_close", None)
        if callable(on_close):  # runtime.Device: removal at once instead of at the next poll
            on_close(self._on_device_closed)
        log.info("serving device %s (%d tools)", device_id, len(device.tools))
        self._rebuild()
        return True

    def remove_device(self, device_id: str) -> None:
        """Stop serving a device; calls in flight and later calls to its tools get tool errors."""
        device = self.devices.pop(device_id, None)
        if device is None:
            return
        unsubscribe = self._unsubscribe.pop(device_id, None)
        if unsubscribe is not None:
            with contextlib.suppress(Exception):
                unsubscribe()
        for name, entry in self._entries.items():
            if entry.device is device:
                self._gone.pop(name, None)  # (re)inserted as the newest
                self._gone[name] = device_id
        while len(self._gone) > MAX_GONE_TOOLS:
            del self._gone[next(iter(self._gone))]
        for task in self._device_calls.pop(device_id, set()):
            task.cancel()
        self.events.forget(device_id)
        log.info("device %s went away", device_id)
        self._rebuild()

    def prune_closed(self) -> None:
        """Remove every device whose connection has closed."""
        for device_id, device in list(self.devices.items()):
            if device.closed:
                self.remove_device(device_id)

    async def watch(self, interval: float = 0.25) -> None:
        """Notice devices that close (run as a background task)."""
        while True:
            self.prune_closed()
            await asyncio.sleep(interval)

    def on_tools_changed(self, callback: Callable[[], None]) -> Callable[[], None]:
        self._listeners.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(callback)

        return unsubscribe

    def on_device_event(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(events resource URI)`` after each event of a served device."""
        self._event_listeners.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._event_listeners.remove(callback)

        return unsubscribe

    def _visible(self, tool: ToolInfoLike) -> bool:
        return self.user_tools or not tool.user_only

    def _rebuild(self) -> None:
        keys = [
            ToolKey(device_id, tool.name)
            for device_id, device in self.devices.items()
            for tool in device.tools
            if self._visible(tool)
        ]
        names = ToolNameMap(keys, prefix=self.prefix_tools, safe=self.safe_names)
        entries: dict[str, _Entry] = {}
        order: list[str] = []
        refused: dict[str, str] = {}
        for device_id in sorted(self.devices):
            device = self.devices[device_id]
            for tool in device.tools:
                if not self._visible(tool):
                    continue
                name = names.exported(ToolKey(device_id, tool.name))
                if name in entries or name in refused:
                    continue  # a device listing one name twice: first one wins
                self._gone.pop(name, None)
                reason = self._refusal(tool)
                if reason is not None:
                    refused[name] = f"tool {tool.name} of device {device_id} is not served: {reason}"
                    if name not in self._refused:
                        log.warning("%s", refused[name])
                    continue
                entries[name] = _Entry(device, tool, name)
                order.append(name)
        self._entries = entries
        self._order = order
        self._refused = refused
        self._validators.clear()
        self._changed()

    def _refusal(self, tool: ToolInfoLike) -> str | None:
        """Why the bridge cannot validate calls to ``tool`` (a ``pattern`` RE2 refuses),
        or None; session setup recorded it on a runtime ``ToolInfo`` (``refused``)."""
        if not self.validate_arguments:
            return None  # nothing is checked, so no pattern runs here
        recorded = getattr(tool, "refused", False)
        if recorded is not False:
            return recorded if isinstance(recorded, str) else None
        problem = unsupported_pattern(tool.input_schema)
        return None if problem is None else str(problem)

    def _changed(self) -> None:
        for callback in list(self._listeners):
            try:
                callback()
            except Exception:  # a listener must not break the others
                log.exception("tools-changed listener failed")
        for session in list(self._sessions.values()):
            if session.push is not None and session.protocol_version is not None and not session.closed:
                self.spawn(session.push(TOOLS_CHANGED))

    def spawn(self, coro: Awaitable[Any]) -> asyncio.Future[Any]:
        """Runs ``coro`` in the background; the bridge keeps it until it ends."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    def _on_device_notification(self, device: DeviceLike, method: str, params: Any) -> None:
        params = params if isinstance(params, dict) else {}
        if method == "notifications/progress":
            route = self._progress.get(str(params.get("progressToken")))
            if route is not None:
                emit, client_token = route
                forwarded = {k: v for k, v in params.items() if k != "_meta"}
                forwarded["progressToken"] = client_token
                sending = self.spawn(emit(notification("notifications/progress", forwarded)))
                # the call's answer waits for these (the transport may end the stream with it)
                self._progress_sends.setdefault(str(params.get("progressToken")), set()).add(sending)
        elif method == "notifications/tools/list_changed":
            self.spawn(self._refresh(device))
        elif method == "notifications/resources/updated" and self.devices.get(device.device_id) is device:
            self._forward_resource_update(device.device_id, params)
        elif (event := event_name(method)) is not None and self.devices.get(device.device_id) is device:
            self._forward_event(device.device_id, event, params)

    def _forward_resource_update(self, device_id: str, params: dict[str, Any]) -> None:
        """A device's ``notifications/resources/updated`` to the sessions subscribed to
        it, with the URI each session subscribed with (``device_resources``)."""
        uri = params.get("uri")
        if not isinstance(uri, str):
            return
        for session in list(self._sessions.values()):
            if session.push is None or session.protocol_version is None or session.closed:
                continue
            for named, (routed_device, inner) in list(session.resource_routes.items()):
                if routed_device == device_id and inner == uri and named in session.subscriptions:
                    self.spawn(session.push(notification("notifications/resources/updated", {"uri": named})))

    async def subscribe_request(
        self, session: Session, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """``resources/subscribe`` / ``unsubscribe``: the events resources are the bridge's
        own; a device resource's subscription is also forwarded to the device (its
        unsubscribe once no session holds it)."""
        uri = params.get("uri")
        target = None
        if isinstance(uri, str):
            target = await device_resources.route(self.devices, uri, self.prefix_tools)
        if target is None:
            events_of = device_of(uri) if isinstance(uri, str) else None
            if method == "resources/subscribe" and events_of is not None and events_of not in self.devices:
                raise RpcFailure(
                    RESOURCE_NOT_FOUND,
                    f"Resource not found: no device {quote(events_of)} is connected (resources/list "
                    "names the events URI of each one)",
                    {"uri": _bounded(uri)},
                )
            return self.subscribe(session, method, params)
        device_id, inner = target
        device = self.devices.get(device_id)
        if device is None or not hasattr(device, "request"):
            raise RpcFailure(RESOURCE_NOT_FOUND, "Resource not found", {"uri": _bounded(uri)})
        subscribing = method == "resources/subscribe"
        others = any(uri in s.subscriptions for s in self._sessions.values() if s is not session)
        if subscribing or not others:
            try:
                await device.request(method, {"uri": inner})
            except Exception as exc:
                code = getattr(exc, "code", None)
                # the device's message alone: the code is the error's own field, not repeated
                message = getattr(exc, "message", None) or str(exc)
                raise RpcFailure(code if isinstance(code, int) else INVALID_PARAMS, str(message)) from None
        if subscribing:
            if uri not in session.subscriptions and len(session.subscriptions) >= MAX_SUBSCRIPTIONS:
                raise RpcFailure(INVALID_PARAMS, f"at most {MAX_SUBSCRIPTIONS} subscriptions per session")
            session.subscriptions.add(str(uri))
            session.resource_routes[str(uri)] = (device_id, inner)
        else:
            session.subscriptions.discard(str(uri))
            session.resource_routes.pop(str(uri), None)
        return {}

    def _forward_event(self, device_id: str, event: str, arguments: dict[str, Any]) -> None:
        """A device event to MCP clients, two ways (docs/bridge.md, "Device events").

        * To every handshake-era client as a log message (``notifications/message``): the
          one server-to-client channel every such client accepts without asking for it;
          ``data`` carries the event name, the device and the typed arguments as JSON.
        * Into the device's events resource (``events.py``): subscribers get
          ``notifications/resources/updated``. This is how 2026-07-28 clients, which get
          no unsolicited log messages, learn of events (``subscriptions/listen``).
        """
        message = notification(
            "notifications/message",
            {
                "level": EVENT_LEVEL,
                "logger": f"mcpgen.device.{device_id}",
                "data": {"event": event, "device": device_id, "arguments": arguments},
            },
        )
        self.events.record(device_id, event, arguments)
        uri = events_uri(device_id)
        updated = notification("notifications/resources/updated", {"uri": uri})
        for session in list(self._sessions.values()):
            if session.push is None or session.protocol_version is None or session.closed:
                continue
            if session.wants_level(EVENT_LEVEL):
                self.spawn(session.push(message))
            if uri in session.subscriptions:
                self.spawn(session.push(updated))
        for callback in list(self._event_listeners):
            try:
                callback(uri)
            except Exception:  # a listener must not break the others
                log.exception("device-event listener failed")

    async def _refresh(self, device: DeviceLike) -> None:
        # runtime.Device re-reads its tool list itself on list_changed; wait for that.
        # A device handle without that machinery is asked to refresh, if it can.
        waiter = getattr(device, "wait_tools_changed", None)
        refresh = getattr(device, "refresh_tools", None)
        try:
            if callable(waiter):
                await waiter(timeout=self.call_timeout or 30.0)
            elif callable(refresh):
                result = refresh()
                if inspect.isawaitable(result):
                    await result
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("re-reading the tools of %s failed: %s", device.device_id, exc)
        if self.devices.get(device.device_id) is device:
            self._rebuild()

    def _on_device_closed(self, device: DeviceLike) -> None:
        if self.devices.get(device.device_id) is device:
            self.remove_device(device.device_id)

    # ------------------------------------------------------------------ sessions

    def new_session(self, transport: str, push: Emit | None = None) -> Session:
        session = Session(transport=transport, push=push)
        self._sessions[session.id] = session
        return session

    def close_session(self, session: Session) -> None:
        session.closed = True
        self._sessions.pop(session.id, None)

    async def close(self) -> None:
        """End every session and cancel what is in flight."""
        for session in list(self._sessions.values()):
            self.close_session(session)
        for task in list(self._background):
            task.cancel()

    # ------------------------------------------------------------------ tools

    def tool_names(self) -> list[str]:
        return list(self._order)

    def resolve(self, exported_name: str) -> tuple[DeviceLike, ToolInfoLike] | None:
        entry = self._entries.get(exported_name)
        return (entry.device, entry.tool) if entry else None

    def asks_person(self, exported_name: Any) -> bool:
        """Does a call of this tool ask the person first (``elicit.py``)?"""
        entry = self._entries.get(exported_name) if isinstance(exported_name, str) else None
        return entry is not None and human_ask(entry.tool.raw) is not None

    def exported_tools(self, version: str, can_elicit: bool = True) -> list[dict[str, Any]]:
        """The tools as a client of ``version`` sees them; the parameters asked of the
        person are left out (the bridge asks for them), unless the client cannot be asked
        (``can_elicit`` False) and ``allow_without_elicitation`` lets the model supply them."""
        hide = can_elicit or not self.allow_without_elicitation
        tools = []
        for name in self._order:
            entry = self._entries[name]
            tool, device_id = entry.tool, entry.device.device_id
            raw = tool.raw if isinstance(tool.raw, dict) else {}
            schema = dict(tool.input_schema) if isinstance(tool.input_schema, dict) else {}
            if hide:
                schema = model_schema(schema, human_ask(raw))
            schema.setdefault("type", "object")
            description = tool.description or ""
            if self.prefix_tools:
                description = f"[{device_id}] {description}".rstrip()
            item: dict[str, Any] = {"name": name, "description": description, "inputSchema": schema}
            if version_at_least(version, "2025-03-26") and isinstance(raw.get("annotations"), dict):
                item["annotations"] = raw["annotations"]
            if version_at_least(version, "2025-06-18"):
                for key in ("title", "outputSchema"):
                    if key in raw:
                        item[key] = raw[key]
                item["_meta"] = {META_DEVICE: device_id, META_DEVICE_TOOL: tool.name}
                if getattr(tool, "reports_progress", False) is True:  # spec `progress: true`
                    item["_meta"][PROGRESS_META_KEY] = True
            tools.append(item)
        return tools

    @staticmethod
    def modern_version(params: dict[str, Any]) -> Any:
        """The version in a request's ``_meta`` (None: not a 2026-07-28-style request)."""
        meta = params.get("_meta")
        return meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None

    @classmethod
    def is_modern(cls, method: str, params: dict[str, Any]) -> bool:
        """Does this request use the stateless 2026-07-28 rules?"""
        if method == "initialize":
            return False
        return cls.modern_version(params) is not None or method in ("server/discover", "subscriptions/listen")

    @staticmethod
    def subscribe(session: Session, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """``resources/subscribe`` or ``resources/unsubscribe`` for one session."""
        uri = params.get("uri")
        if not isinstance(uri, str) or device_of(uri) is None:
            raise RpcFailure(
                INVALID_PARAMS,
                f"{method}: {quote(uri)} is not a resource that can be subscribed to: give a "
                "device's events URI (mcpgen://devices/<id>/events) or the URI of a device "
                "resource with subscribe (resources/list)",
            )
        if method == "resources/subscribe":
            if uri not in session.subscriptions and len(session.subscriptions) >= MAX_SUBSCRIPTIONS:
                raise RpcFailure(INVALID_PARAMS, f"at most {MAX_SUBSCRIPTIONS} subscriptions per session")
            session.subscriptions.add(uri)
        else:
            session.subscriptions.discard(uri)
        return {}

    @staticmethod
    def set_level(session: Session, params: dict[str, Any]) -> dict[str, Any]:
        """``logging/setLevel``: the level of the log notifications ``session`` receives."""
        level = params.get("level")
        if level not in LOG_LEVELS:
            allowed = ", ".join(LOG_LEVELS)
            raise RpcFailure(INVALID_PARAMS, f"logging/setLevel: level must be one of {allowed}")
        session.log_level = str(level)
        return {}

    async def resources_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The resources/* requests: each device's events resource (``_resources``) and the
        devices' own resources (``device_resources``)."""
        if method in ("resources/list", "resources/templates/list"):
            out = self._resources(method, params)
            key = "resources" if method == "resources/list" else "resourceTemplates"
            devices = await device_resources.list_entries(self.devices, key != "resources", self.prefix_tools)
            out[key] = out[key] + devices
            return out
        if method == "resources/read":
            uri = params.get("uri")
            if isinstance(uri, str):
                read = await device_resources.read(self.devices, uri, RESOURCE_NOT_FOUND, self.prefix_tools)
                if read is not None:
                    return read
        return self._resources(method, params)

    async def complete(self, params: dict[str, Any]) -> dict[str, Any]:
        """``completion/complete`` of a resource template's variable (``completion.py``)."""
        return await self.completer.complete(self.devices, params, self.prefix_tools)

    def prompts_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """``prompts/list`` and ``prompts/get`` (``prompts.py``): a prompt's tools and resources
        are named as this bridge serves them."""
        if method == "prompts/list":
            return self.prompts.list_result(params)
        return self.prompts.get(params, self.exported_tool_name, self.served_uri)

    def exported_tool_name(self, tool_name: str) -> str | None:
        """The name a device tool is served as (the first device, by id, that has it)."""
        return next((n for n in self._order if self._entries[n].tool.name == tool_name), None)

    def served_uri(self, uri: str) -> str | None:
        """The URI a device resource is served as (the first device, by id; None: none served)."""
        device_id = min(self.devices, default=None)
        return device_resources.bridge_uri(device_id, uri) if device_id is not None else None

    def _resources(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Each served device's events as a resource (see ``events.py``)."""
        if method == "resources/list":
            if params.get("cursor") is not None:
                raise RpcFailure(INVALID_PARAMS, "invalid cursor (this server returns one page)")
            return {"resources": [self.events.resource(device_id) for device_id in sorted(self.devices)]}
        if method == "resources/templates/list":
            return {"resourceTemplates": [events_template_entry()]}
        if method == "resources/read":
            uri = params.get("uri")
            device_id = device_of(uri) if isinstance(uri, str) else None
            if device_id is None or device_id not in self.devices:
                raise RpcFailure(RESOURCE_NOT_FOUND, "Resource not found", {"uri": _bounded(uri)})
            return self.events.contents(device_id)
        raise RpcFailure(METHOD_NOT_FOUND, f"method not found: {quote(method)}")

    def tools_list(self, params: dict[str, Any], version: str, can_elicit: bool = True) -> dict[str, Any]:
        """The ``tools/list`` result for a client of protocol ``version`` (one page)."""
        if params.get("cursor") is not None:
            raise RpcFailure(INVALID_PARAMS, "invalid cursor (this server returns one page)")
        return {"tools": self.exported_tools(version, can_elicit)}

    # ------------------------------------------------------------------ tools/call

    async def tools_call(
        self, params: dict[str, Any], emit: Emit | None, version: str, ask: Ask | None = None
    ) -> dict[str, Any]:
        """Runs one ``tools/call`` on the device that serves the tool (``emit`` forwards progress,
        ``ask`` sends the client ``elicitation/create``; None: the client cannot be asked)."""
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcFailure(INVALID_PARAMS, "tools/call needs a tool name")
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            return tool_error("arguments must be an object")
        resolved = self.resolve(name)
        if resolved is None:
            gone = self._gone.get(name)
            if gone is not None:
                return tool_error(f"device {gone} is not connected (tool {name} is unavailable)")
            refused = self._refused.get(name)
            if refused is not None:
                return tool_error(refused)
            raise RpcFailure(INVALID_PARAMS, f"unknown tool: {quote(name)}")
        device, tool = resolved
        arguments = arguments or {}
        human = human_ask(tool.raw)
        if human is not None:
            if ask is None:
                if not self.allow_without_elicitation:
                    return tool_error(no_capability(name, human))
            else:
                wrong = misplaced(arguments, human)
                problem = (
                    f"{', '.join(wrong)} is asked of the person, not the model; call the tool without it"
                    if wrong
                    else self._validation_error(device, tool, arguments, hidden=human.names)
                )
                if problem is not None:
                    return tool_error(f"invalid arguments for {tool.name}: {problem}")
                label = tool.raw.get("title") if isinstance(tool.raw.get("title"), str) else None
                outcome = await ask_person(
                    name, label or name, tool.input_schema, human, arguments, ask, self.human_timeout
                )
                if outcome.arguments is None:
                    return tool_error(outcome.refusal or f"the call to {name} was not made")
                arguments = outcome.arguments
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        result = await self._forward(device, tool, arguments, token, emit)
        return self._shape_result(result, version)

    def _shape_result(self, result: dict[str, Any], version: str) -> dict[str, Any]:
        shaped = dict(result)
        if not isinstance(shaped.get("content"), list):
            shaped["content"] = []
        if "isError" in shaped and not isinstance(shaped["isError"], bool):
            shaped["isError"] = bool(shaped["isError"])
        if not version_at_least(version, "2025-06-18"):
            shaped.pop("structuredContent", None)
        shaped.pop("resultType", None)
        return shaped

    def _validation_error(
        self,
        device: DeviceLike,
        tool: ToolInfoLike,
        arguments: dict[str, Any],
        hidden: frozenset[str] = frozenset(),
    ) -> str | None:
        """What is wrong with ``arguments`` for ``tool``, or None: the runtime's own
        validator (the rules ``Device.call`` and the console apply; patterns on RE2, so a
        device's pattern cannot stall the loop), built once per tool. With ``hidden`` (the
        parameters asked of the person), the model's part alone is checked, before asking."""
        if not self.validate_arguments:
            return None
        key = (device.device_id, tool.name + ("\0model" if hidden else ""))
        validator = self._validators.get(key)
        if validator is None:
            try:
                validator = SchemaValidator(
                    model_schema(tool.input_schema, human_ask(tool.raw)) if hidden else tool.input_schema
                )
            except UnsupportedPattern as exc:
                validator = exc
            self._validators[key] = validator
        if isinstance(validator, UnsupportedPattern):
            return clip(str(validator), 4 * QUOTE_LIMIT)
        try:
            validator.validate(arguments)
        except ValidationError as exc:
            # the message quotes a bounded prefix of the value; cut the whole to size too
            return clip(str(exc), 4 * QUOTE_LIMIT)
        return None

    def _call_kwargs(self, device: DeviceLike, bridge_token: str | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"timeout": self.call_timeout}
        if bridge_token is None:
            return kwargs
        try:
            accepted = inspect.signature(device.call_raw).parameters
        except (TypeError, ValueError):
            return kwargs
        if "progress_token" in accepted:
            kwargs["progress_token"] = bridge_token
        elif "meta" in accepted:
            kwargs["meta"] = {"progressToken": bridge_token}
        return kwargs

    async def _forward(
        self,
        device: DeviceLike,
        tool: ToolInfoLike,
        arguments: dict[str, Any],
        client_token: Any,
        emit: Emit | None,
    ) -> dict[str, Any]:
        device_id = device.device_id
        if device.closed or self.devices.get(device_id) is not device:
            return tool_error(f"device {device_id} is not connected")
        problem = self._validation_error(device, tool, arguments)
        if problem is not None:
            return tool_error(f"invalid arguments for {tool.name}: {problem}")
        bridge_token: str | None = None
        if client_token is not None and emit is not None and isinstance(client_token, (str, int)):
            bridge_token = f"bridge-{next(self._progress_ids)}"
            self._progress[bridge_token] = (emit, client_token)
        kwargs = self._call_kwargs(device, bridge_token)
        call = asyncio.ensure_future(device.call_raw(tool.name, arguments, **kwargs))
        calls = self._device_calls.setdefault(device_id, set())
        calls.add(call)
        sending: set[asyncio.Future[Any]] = set()
        # The runtime enforces call_timeout itself; this is a backstop so nothing hangs.
        backstop = None if self.call_timeout is None else self.call_timeout + self.timeout_slack
        try:
            async with asyncio.timeout(backstop):
                result = await call
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            return tool_error(f"device {device_id} went away during the call")
        except TimeoutError:
            return tool_error(f"device {device_id} did not answer {tool.name} in time")
        except Exception as exc:
            return tool_error(describe_device_error(device_id, tool.name, exc))
        finally:
            calls.discard(call)
            if bridge_token is not None:
                self._progress.pop(bridge_token, None)
                sending = self._progress_sends.pop(bridge_token, set())
        if sending:  # progress the device sent before its answer goes out before the answer
            await asyncio.wait(sending, timeout=PROGRESS_FLUSH)
        if not isinstance(result, dict):
            return tool_error(f"device {device_id} sent a malformed result for {tool.name}")
        return result

    def sessions(self) -> Iterable[Session]:
        return list(self._sessions.values())


def _bounded(value: Any) -> Any:
    """A value echoed in an error's ``data``: a long text is cut (see ``protocol.quote``)."""
    return clip(value, QUOTE_LIMIT) if isinstance(value, str) else value


def tool_error(text: str) -> dict[str, Any]:
    """A ``tools/call`` result that reports a failure to the model (``isError: true``)."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


def describe_device_error(device_id: str, tool_name: str, exc: BaseException) -> str:
    kind = type(exc).__name__
    if isinstance(exc, TimeoutError) or "Timeout" in kind:
        return f"device {device_id} did not answer {tool_name} in time"
    if isinstance(exc, (ConnectionError, EOFError)) or "Disconnect" in kind:
        detail = clip(str(exc))
        return f"device {device_id} disconnected: {detail}" if detail else f"device {device_id} disconnected"
    message = clip(str(getattr(exc, "message", None) or str(exc) or kind))
    code = getattr(exc, "code", None)
    if isinstance(code, int):
        return f"{tool_name} failed on device {device_id} (error {code}): {message}"
    return f"{tool_name} failed on device {device_id}: {message}"

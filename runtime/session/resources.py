"""Device resources on the backend: MCP ``resources/list``, ``resources/templates/list`` and
``resources/read`` over a ``runtime.Device``.

Dynamic mode (any device, spec unknown): ``await list_resources(device)``,
``await read_resource(device, uri)``. Typed bindings wrap each resource of the spec in a
``ResourceReader`` subclass whose ``read(**params)`` validates the template variables like
tool arguments, expands the URI template and returns ``str`` (text) or ``bytes``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any, Optional, Union

from mcpgen.runtime.errors import ProtocolError

log = logging.getLogger(__name__)
Content = Union[str, bytes]
UPDATED = "notifications/resources/updated"
MAX_PAGES = 1000  # a device that never stops paging is broken, not big
# RFC 3986 unreserved characters: the only ones a level 1 expansion leaves as they are.
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_EXPRESSION = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _text_of(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def expand(template: str, values: Mapping[str, Any]) -> str:
    """RFC 6570 level 1 expansion: each ``{var}`` becomes its value, UTF-8 percent-encoded
    except unreserved characters (``urllib.parse.quote`` would keep ``/``, which a level 1
    value must not carry)."""

    def one(m: re.Match[str]) -> str:
        raw = _text_of(values[m.group(1)]).encode("utf-8")
        return "".join(chr(b) if chr(b) in _UNRESERVED else f"%{b:02X}" for b in raw)

    return _EXPRESSION.sub(one, template)


async def _pages(device: Any, method: str, key: str, timeout: Optional[float]) -> list[dict]:
    out: list[dict] = []
    cursor: Optional[str] = None
    for _ in range(MAX_PAGES):
        result = await device.request(method, {"cursor": cursor} if cursor else {}, timeout=timeout)
        if not isinstance(result, dict) or not isinstance(result.get(key), list):
            raise ProtocolError(f"{method}: expected a result with a {key!r} list, got {result!r:.200}")
        out += result[key]
        cursor = result.get("nextCursor")
        if not cursor:
            return out
    raise ProtocolError(f"{method}: more than {MAX_PAGES} pages")


async def list_resources(device: Any, *, timeout: Optional[float] = None) -> list[dict]:
    """Every entry of ``resources/list`` (all pages): ``{"uri", "name", "description", "mimeType"}``."""
    return await _pages(device, "resources/list", "resources", timeout)


async def list_resource_templates(device: Any, *, timeout: Optional[float] = None) -> list[dict]:
    """Every entry of ``resources/templates/list``: ``{"uriTemplate", "name", ...}``."""
    return await _pages(device, "resources/templates/list", "resourceTemplates", timeout)


def decode_contents(uri: str, result: Any) -> Content:
    """The first content of a ``resources/read`` result: its ``text``, or its ``blob`` decoded."""
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list) or not contents or not isinstance(contents[0], dict):
        raise ProtocolError(f"resources/read {uri}: expected contents, got {result!r:.200}")
    first = contents[0]
    if isinstance(first.get("text"), str):
        return str(first["text"])
    if isinstance(first.get("blob"), str):
        try:
            return base64.b64decode(first["blob"], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ProtocolError(f"resources/read {uri}: blob is not base64 ({exc})") from None
    raise ProtocolError(f"resources/read {uri}: content has neither text nor blob")


async def read_resource(device: Any, uri: str, *, timeout: Optional[float] = None) -> Content:
    """The content at ``uri``: ``str`` for text, ``bytes`` for a blob. A device error
    (-32002 unknown URI, -32602 bad template value) raises like a failed request."""
    result = await device.request("resources/read", {"uri": uri}, timeout=timeout)
    return decode_contents(uri, result)


class ResourceUpdates:
    """``async for uri in updates:``: each ``notifications/resources/updated`` the device
    sends for ``uri``. Subscribes (``resources/subscribe``) on the first ``__anext__``;
    ``await updates.aclose()`` unsubscribes and ends the iteration, as does the device
    closing. Updates beyond ``buffer`` not yet consumed are dropped (only "it changed"
    matters: the next ``read()`` gets the current content)."""

    def __init__(self, device: Any, uri: str, buffer: int = 16) -> None:
        self._device = device
        self._uri = uri
        self._queue: asyncio.Queue[Optional[str]] = asyncio.Queue(max(1, buffer))
        self._unsubscribe: Optional[Callable[[], None]] = None
        self._ended = False

    def __aiter__(self) -> ResourceUpdates:
        return self

    def _put(self, item: Optional[str]) -> None:
        try:
            self._queue.put_nowait(item)
        except asyncio.QueueFull:
            if item is None:  # the end must get through: drop an update instead
                self._queue.get_nowait()
                self._queue.put_nowait(None)

    def _on_notification(self, method: str, params: dict) -> None:
        if method == UPDATED and isinstance(params, dict) and params.get("uri") == self._uri:
            self._put(self._uri)

    async def _start(self) -> None:
        self._unsubscribe = self._device.on_notification(self._on_notification)
        self._device.on_close(lambda _device: self._put(None))
        await self._device.request("resources/subscribe", {"uri": self._uri})

    async def __anext__(self) -> str:
        if self._ended:
            raise StopAsyncIteration
        if self._unsubscribe is None:
            await self._start()
        item = await self._queue.get()
        if item is None:
            self._ended = True
            raise StopAsyncIteration
        return item

    async def aclose(self) -> None:
        """Unsubscribes (when the device is still there) and ends the iteration."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            if not self._ended and not getattr(self._device, "closed", False):
                try:
                    await self._device.request("resources/unsubscribe", {"uri": self._uri})
                except Exception as exc:  # closing must not fail on a device that went away
                    log.debug("resources/unsubscribe %s failed: %s", self._uri, exc)
        self._ended = True
        self._put(None)


class ResourceReader:
    """One resource of generated bindings; subclasses add a typed ``read``."""

    URI = ""  # the fixed URI or the template
    BINARY = False

    def __init__(self, device: Any) -> None:
        self._device = device

    async def _read(self, values: Mapping[str, Any], timeout: Optional[float] = None) -> Content:
        uri = expand(self.URI, values) if values else self.URI
        content = await read_resource(self._device, uri, timeout=timeout)
        if isinstance(content, bytes) != self.BINARY:
            want = "bytes (blob)" if self.BINARY else "text"
            raise ProtocolError(
                f"resources/read {uri}: the spec says {want}, the device sent {type(content).__name__}"
            )
        return content

    def updates(self, *, buffer: int = 16) -> ResourceUpdates:
        """Updates of this resource (a fixed URI with ``subscribe: true`` in the spec)."""
        if "{" in self.URI:
            raise TypeError(
                f"{self.URI} is a template: subscribe with "
                "runtime.session.resources.ResourceUpdates(device, uri)"
            )
        return ResourceUpdates(self._device, self.URI, buffer)

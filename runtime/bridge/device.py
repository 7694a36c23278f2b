"""The part of the runtime's Device handle the bridge uses (see docs/architecture.md).

Typed as Protocols so the bridge works with ``runtime.Device`` and with small in-memory
fakes in tests alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class ToolInfoLike(Protocol):
    """One tool as the device reported it in ``tools/list``."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> Mapping[str, Any]: ...

    @property
    def user_only(self) -> bool: ...

    @property
    def raw(self) -> Mapping[str, Any]: ...


NotificationCallback = Callable[[str, dict[str, Any]], Any]


@runtime_checkable
class DeviceLike(Protocol):
    """A connected device: its id, its tools, a raw call and its notifications."""

    @property
    def device_id(self) -> str: ...

    @property
    def tools(self) -> Sequence[ToolInfoLike]: ...

    @property
    def closed(self) -> bool: ...

    async def call_raw(
        self, name: str, arguments: dict[str, Any] | None, *, timeout: float | None = None
    ) -> dict[str, Any]: ...

    def on_notification(self, callback: NotificationCallback) -> Callable[[], None]: ...

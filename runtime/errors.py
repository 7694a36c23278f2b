"""Typed errors raised by the backend runtime.

Every error a device interaction can end in derives from :class:`McpDeviceError`, so
``except McpDeviceError`` catches them all. Each also derives from the closest builtin
(``ValueError``, ``TimeoutError``, ``ConnectionError``) so generic handlers keep working.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Optional


class McpDeviceError(Exception):
    """Base class of every error the runtime raises about a device."""


# ToolError and RpcError are raised for device replies on the decode hot path, where
# runtime.core.wire builds them without running __init__ (BaseException.__new__ with the
# same ``args``, then ToolError's slots): keep wire._tool_error / wire._new_rpc_error in
# step with these constructors (tests/runtime/test_codec_fastpaths.py compares them).
# The attributes are slots, which are much cheaper to set than instance-dict entries.


class ToolError(McpDeviceError):
    """The tool ran and failed: the device answered with ``isError: true``.

    ``message`` is the device's text; ``content`` the MCP content list as sent.
    """

    __slots__ = ("message", "content")

    def __init__(self, message: str, content: Optional[list[Any]] = None) -> None:
        super().__init__(message)
        self.message = message
        self.content: list[Any] = list(content) if content else []

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.content))


class RpcError(McpDeviceError):
    """A JSON-RPC error object from the device.

    ``code`` is ``None`` when the device sent none (stock xiaozhi firmware omits it).
    ``args`` is ``(code, message, data)``, as an ``OSError``'s is ``(errno, strerror)``;
    ``str(e)`` is ``"[code] message"`` (``message`` alone without a code), made when read:
    a backend builds one per error reply and mostly branches on ``code``.
    """

    __slots__ = ()

    def __init__(self, code: Optional[int], message: str, data: Any = None) -> None:
        super().__init__(code, message, data)

    @property
    def code(self) -> Optional[int]:
        return self.args[0]

    @property
    def message(self) -> str:
        return self.args[1]

    @property
    def data(self) -> Any:
        return self.args[2]

    def __str__(self) -> str:
        code, message, _ = self.args
        return message if code is None else f"[{code}] {message}"


class ProtocolError(McpDeviceError):
    """The device sent something that is not valid MCP/JSON-RPC for the request."""


class DeviceTimeout(McpDeviceError, TimeoutError):
    """No reply arrived within the call timeout."""


class DeviceDisconnected(McpDeviceError, ConnectionError):
    """The transport to the device dropped (or the handle was closed)."""


class ValidationError(McpDeviceError, ValueError):
    """An argument broke a rule of the tool's input schema; nothing was sent.

    ``argument`` is the argument name (``""`` for the arguments object itself),
    ``rule`` the JSON Schema keyword it broke (``type``, ``minimum``, ``maximum``,
    ``maxLength``, ``enum``, ``pattern``, ``required``, ``additionalProperties``).
    """

    def __init__(self, argument: str, rule: str, message: str) -> None:
        super().__init__(f"{argument}: {message}" if argument else message)
        self.argument = argument
        self.rule = rule
        self.message = message


class UnsupportedPattern(ValidationError):
    """A tool's input schema has a ``pattern`` the runtime will not run: RE2, the
    linear-time engine every pattern runs on, cannot compile it (backreferences,
    lookaround, atomic groups, possessive repeats, ``\\Z``, too large a program).

    Raised when the tool's validator is built, so a call to that tool with validation
    fails before anything is sent; the device's other tools work. Session setup records
    the reason for each such tool (``ToolInfo.refused``) and logs it. ``pattern`` is the
    pattern as reported, ``reason`` why RE2 refused it.
    """

    def __init__(self, argument: str, pattern: str, reason: str) -> None:
        super().__init__(
            argument,
            "pattern",
            f"pattern {clip(pattern, QUOTE_LIMIT)!r} cannot be checked: {reason}; patterns run on RE2 "
            "(linear time), which has no backreferences, lookaround, atomic groups or possessive repeats",
        )
        self.pattern = pattern
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.argument, self.pattern, self.reason))


def range_error(argument: str, rule: str, op: str, bound: Any, value: Any) -> ValidationError:
    """A value outside its range, in the one wording every check uses (runtime.core.validate,
    the bridge): ``volume: must be <= 100, got 101``. ``rule`` is ``minimum`` or
    ``maximum``, ``op`` one of ``>=``, ``>``, ``<=``, ``<``."""
    return ValidationError(argument, rule, f"must be {op} {bound}, got {value}")


class SpecMismatch(McpDeviceError):
    """The device's spec fingerprint differs from the expected one (policy strict)."""

    def __init__(self, expected: Optional[str], actual: Optional[str]) -> None:
        super().__init__(f"spec fingerprint mismatch: expected {expected!r}, device reports {actual!r}")
        self.expected = expected
        self.actual = actual


class NotSupported(McpDeviceError):
    """The device's spec version lacks the tool (or the tool's parameter) that was called;
    raised locally by the bindings of that version, before anything is sent."""

    def __init__(self, tool: str, param: Optional[str], version: str) -> None:
        what = f"parameter `{param}` of tool `{tool}`" if param else f"`{tool}`"
        super().__init__(
            f"{what} is not supported by the device's spec version {version} "
            "(update its firmware, or ask bindings.supports() first)"
        )
        self.tool = tool
        self.param = param
        self.version = version


#: Most characters of a peer's input quoted back in an error text.
QUOTE_LIMIT = 64


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with its full length noted: the one way every
    error text that may carry a peer's input is bounded (gateway, device, bridge)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def quoted(text: object) -> str:
    """``text`` for an error message: a bounded prefix, so a peer's 60 kB method name
    does not come back 60 kB long (what a peer sends must not multiply what we queue)."""
    return clip(str(text), QUOTE_LIMIT)


class LogThrottle:
    """A rate limit for a log line that a peer can cause at will (a refused upgrade, a
    forged token): at most ``burst`` lines per ``interval`` seconds; the rest are counted,
    and the next line logged says how many were left out. Pair it with :func:`quoted` for
    what the peer sent, so neither the number nor the length of lines is the peer's choice.
    """

    def __init__(
        self,
        logger: logging.Logger,
        *,
        burst: int = 10,
        interval: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.burst = burst
        self.interval = interval
        self.clock = clock
        self.suppressed = 0  # lines left out since the last one logged
        self._window_start = float("-inf")
        self._in_window = 0

    def warning(self, msg: str, *args: object) -> bool:
        """Logs ``msg % args`` at WARNING unless over the rate; True when it was logged."""
        now = self.clock()
        if now - self._window_start >= self.interval:
            self._window_start = now
            self._in_window = 0
        if self._in_window >= self.burst:
            self.suppressed += 1
            return False
        self._in_window += 1
        if self.suppressed:
            msg += " (%d more like it left out of the log since the last line)"
            args = (*args, self.suppressed)
            self.suppressed = 0
        self.logger.warning(msg, *args)
        return True


__all__ = [
    "LogThrottle",
    "McpDeviceError",
    "NotSupported",
    "ToolError",
    "RpcError",
    "ProtocolError",
    "DeviceTimeout",
    "DeviceDisconnected",
    "ValidationError",
    "UnsupportedPattern",
    "SpecMismatch",
]

"""Values asked of the person before a forwarded ``tools/call`` (MCP elicitation).

A device announces them in a tool's ``_meta`` (``mcpgen.human``: spec ``from_human`` and
``confirm``). The bridge hides those parameters from the model's ``inputSchema`` and, on each
call, sends the client ``elicitation/create`` with their schemas and the confirmation text;
the accepted values join the model's arguments, and only then does the call go to the
device. Declined or cancelled, nothing is sent to the device and the model gets a tool
result with ``isError`` saying so (docs/bridge.md, "Values asked of the person").
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcpgen.human import HumanAsk, message, requested_schema

from .protocol import QUOTE_LIMIT, clip

Ask = Callable[[str, dict[str, Any]], Awaitable[Mapping[str, Any]]]
"""Sends ``elicitation/create`` (message, requestedSchema) to the client of the request
being handled; returns its result (``action``, ``content``)."""

OPT_OUT_FLAG = "--allow-without-elicitation"
"""The bridge option that lets a client without the elicitation capability call such tools
(the parameters are then published and the model supplies them; nothing is confirmed)."""


@dataclass(frozen=True)
class Outcome:
    """What asking the person gave: the arguments to forward, or the tool result to return."""

    arguments: dict[str, Any] | None = None
    refusal: str | None = None


def _what(ask: HumanAsk) -> str:
    names = [name for name, _ in ask.params]
    if names and ask.confirm:
        return f"a confirmation and the value of {', '.join(names)} from the person"
    if names:
        return f"the value of {', '.join(names)} from the person"
    return "the person's confirmation"


def no_capability(tool: str, ask: HumanAsk) -> str:
    """The tool error for a client that did not declare the ``elicitation`` capability."""
    return (
        f"{tool} needs {_what(ask)} (MCP elicitation), but this client cannot be asked: it did "
        "not declare the elicitation capability (or, as a stateless 2026-07-28 request, has no "
        "channel for it). Use a client that supports elicitation (MCP 2025-06-18 or later), or "
        f"start the bridge with {OPT_OUT_FLAG} to let the model supply the values"
    )


async def ask_person(
    tool: str,
    label: str,
    input_schema: Any,
    ask: HumanAsk,
    arguments: Mapping[str, Any],
    send: Ask,
    timeout: float | None,
) -> Outcome:
    """Ask the person through ``send``; the merged arguments, or why the call is not made.
    ``arguments`` (the model's) must already be checked: none of them is asked of the person."""
    try:
        schema = requested_schema(input_schema, ask)
    except ValueError as exc:
        return Outcome(refusal=f"{tool} cannot be called: {exc}")
    try:
        async with asyncio.timeout(timeout):
            result = await send(message(label, ask), schema)
    except TimeoutError:
        return Outcome(refusal=f"the person did not answer for {tool} in time; the call was not made")
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the client answered with an error, or cannot be reached
        detail = clip(str(getattr(exc, "message", None) or exc or type(exc).__name__), QUOTE_LIMIT)
        return Outcome(refusal=f"could not ask the person for {tool} ({detail}); the call was not made")
    action = result.get("action")
    if action == "decline":
        return Outcome(refusal=f"the person declined {tool}; the call was not made")
    if action != "accept":
        return Outcome(refusal=f"the person cancelled {tool}; the call was not made")
    content = result.get("content")
    values = content if isinstance(content, Mapping) else {}
    merged = dict(arguments)
    for name, _question in ask.params:
        if name in values and values[name] is not None:
            merged[name] = values[name]
    return Outcome(arguments=merged)


__all__ = ["OPT_OUT_FLAG", "Ask", "Outcome", "ask_person", "no_capability"]

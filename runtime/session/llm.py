"""Export device tools as LLM function definitions, with a reversible name mapping.

MCP tool names like ``self.audio_speaker.set_volume`` are not valid function names for
LLM APIs (``^[a-zA-Z0-9_-]{1,64}$``). :class:`NameMap` maps them with the scheme of
:func:`llm_function_name` (``.`` -> ``__``) when that is valid and reversible,
and otherwise with a sanitized, truncated name plus a deterministic hash suffix
(``_`` + 8 hex digits of SHA-256 of the MCP name). It maps both ways. The rule itself
lives in :mod:`mcpgen.llm_names` (the bridge and the spec checker read it too).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Optional, Union

import orjson

from mcpgen.llm_names import (
    HASH_DIGITS,
    LLM_NAME_RE,
    MAX_LLM_NAME,
    hashed_llm_name,
    llm_function_name,
    plain_llm_name,
)

ToolLike = Any  # ToolInfo, a tools/list entry dict, or a bindings SPEC entry


def _tool_fields(tool: ToolLike) -> tuple[str, str, dict, bool]:
    """(name, description, input schema, user_only) of any supported tool object."""
    if isinstance(tool, Mapping):
        name = tool["name"]
        desc = tool.get("description") or ""
        schema = tool.get("inputSchema", tool.get("input_schema")) or {}
        user_only = bool(tool.get("user_only", False))
        ann = tool.get("annotations")
        if isinstance(ann, Mapping):
            aud = ann.get("audience")
            if isinstance(aud, list) and "user" in aud and "assistant" not in aud:
                user_only = True
        return str(name), str(desc), dict(schema), user_only
    return tool.name, tool.description or "", dict(tool.input_schema or {}), bool(tool.user_only)


class NameMap:
    """Bidirectional MCP name <-> LLM function name map for a set of tools."""

    def __init__(self, names: Iterable[Union[str, ToolLike]]) -> None:
        self._to_llm: dict[str, str] = {}
        self._to_mcp: dict[str, str] = {}
        ordered = []
        for n in names:
            mcp = n if isinstance(n, str) else _tool_fields(n)[0]
            if mcp not in self._to_llm and mcp not in ordered:
                ordered.append(mcp)
        hashed = []
        for mcp in ordered:
            plain = plain_llm_name(mcp)
            if plain is None:
                hashed.append(mcp)
            else:
                self._add(mcp, plain)
        for mcp in sorted(hashed):
            digits = HASH_DIGITS
            llm = hashed_llm_name(mcp, digits)
            while llm in self._to_mcp:
                digits += 4
                llm = hashed_llm_name(mcp, digits)
            self._add(mcp, llm)

    def _add(self, mcp: str, llm: str) -> None:
        self._to_llm[mcp] = llm
        self._to_mcp[llm] = mcp

    def to_llm(self, mcp_name: str) -> str:
        return self._to_llm[mcp_name]

    def to_mcp(self, llm_name: str) -> str:
        try:
            return self._to_mcp[llm_name]
        except KeyError:
            raise KeyError(f"unknown LLM function name {llm_name!r}") from None

    def __contains__(self, mcp_name: object) -> bool:
        return mcp_name in self._to_llm

    def __len__(self) -> int:
        return len(self._to_llm)

    def __iter__(self) -> Iterator[str]:
        return iter(self._to_llm)

    def items(self) -> list[tuple[str, str]]:
        """(MCP name, LLM name) pairs."""
        return list(self._to_llm.items())


def _parameters(schema: dict) -> dict:
    out = dict(schema)
    out["type"] = "object"
    out.setdefault("properties", {})
    return out


def _selected(tools: Iterable[ToolLike], include_user_only: bool) -> list[tuple[str, str, dict, bool]]:
    return [f for f in (_tool_fields(t) for t in tools) if include_user_only or not f[3]]


def to_openai_tools(
    tools: Iterable[ToolLike], include_user_only: bool = False, *, name_map: Optional[NameMap] = None
) -> list[dict]:
    """OpenAI ``tools`` entries: ``{"type": "function", "function": {name, description, parameters}}``.

    User-only tools are left out unless ``include_user_only``.
    """
    fields = _selected(tools, include_user_only)
    nm = name_map or NameMap([f[0] for f in fields])
    return [
        {
            "type": "function",
            "function": {"name": nm.to_llm(name), "description": desc, "parameters": _parameters(schema)},
        }
        for name, desc, schema, _ in fields
    ]


def to_anthropic_tools(
    tools: Iterable[ToolLike], include_user_only: bool = False, *, name_map: Optional[NameMap] = None
) -> list[dict]:
    """Anthropic ``tools`` entries: ``{name, description, input_schema}``."""
    fields = _selected(tools, include_user_only)
    nm = name_map or NameMap([f[0] for f in fields])
    return [
        {"name": nm.to_llm(name), "description": desc, "input_schema": _parameters(schema)}
        for name, desc, schema, _ in fields
    ]


def export_tools(
    tools: Iterable[ToolLike], flavor: str = "openai", *, include_user_only: bool = False
) -> list[dict]:
    if flavor == "openai":
        return to_openai_tools(tools, include_user_only)
    if flavor == "anthropic":
        return to_anthropic_tools(tools, include_user_only)
    raise ValueError(f"unknown LLM tool flavor {flavor!r} (use 'openai' or 'anthropic')")


def parse_tool_call(
    name_map: NameMap, llm_name: str, arguments: Union[str, bytes, Mapping[str, Any], None]
) -> tuple[str, dict]:
    """An LLM tool call (function name, JSON-text or dict arguments) -> (MCP name, arguments)."""
    if arguments is None or arguments == "" or arguments == b"":
        args: Any = {}
    elif isinstance(arguments, (str, bytes)):
        args = orjson.loads(arguments)
    else:
        args = dict(arguments)
    if not isinstance(args, dict):
        raise ValueError("tool call arguments must be a JSON object")
    return name_map.to_mcp(llm_name), args


__all__ = [
    "NameMap",
    "to_openai_tools",
    "to_anthropic_tools",
    "export_tools",
    "parse_tool_call",
    "LLM_NAME_RE",
    "MAX_LLM_NAME",
    "llm_function_name",
]

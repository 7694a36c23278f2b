"""The names device tools get where a language model sees them: one home for the LLM
function-name rule, read by the runtime (``mcpgen.runtime.session.llm``), the bridge
(``mcpgen.runtime.bridge.names``) and the spec checker (``codegen.spec.consumer_names``).

A tool name such as ``self.light.set_on`` is a valid MCP name, but LLM function-calling
APIs accept only ``^[a-zA-Z0-9_-]{1,64}$``. mcpgen maps ``.`` to ``__`` (reversible,
because spec tool names never contain ``__``); a name that does not map back that way is
sanitized, cut and given ``_`` and 8 hex digits of the SHA-256 of the original.
"""

from __future__ import annotations

import hashlib
import re
from typing import Optional

#: What LLM function-calling APIs accept as a function name.
LLM_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_LLM_NAME = 64
#: Hex digits of the hash a sanitized name ends with.
HASH_DIGITS = 8
_NOT_LLM_SAFE = re.compile(r"[^A-Za-z0-9_-]")


def llm_function_name(tool_name: str) -> str:
    """mcpgen's mapping: ``self.light.set_on`` -> ``self__light__set_on``."""
    return tool_name.replace(".", "__")


def llm_safe_chars(name: str) -> str:
    """``name`` with every character outside ``A-Za-z0-9_-`` turned into ``_``."""
    return _NOT_LLM_SAFE.sub("_", name)


def plain_llm_name(tool_name: str) -> Optional[str]:
    """:func:`llm_function_name` of ``tool_name`` when that is valid and maps back, else None."""
    plain = llm_function_name(tool_name)
    if LLM_NAME_RE.match(plain) and plain.replace("__", ".") == tool_name:
        return plain
    return None


def hashed_llm_name(tool_name: str, digits: int = HASH_DIGITS) -> str:
    """A valid name for any ``tool_name``: sanitized, cut, ``_`` + ``digits`` hex digits of
    the SHA-256 of ``tool_name``."""
    digest = hashlib.sha256(tool_name.encode("utf-8")).hexdigest()[:digits]
    stem = llm_safe_chars(llm_function_name(tool_name)) or "tool"
    return f"{stem[: MAX_LLM_NAME - digits - 1]}_{digest}"


def safe_llm_name(tool_name: str) -> str:
    """The plain name when it maps back, else the hashed one."""
    return plain_llm_name(tool_name) or hashed_llm_name(tool_name)


__all__ = [
    "HASH_DIGITS",
    "LLM_NAME_RE",
    "MAX_LLM_NAME",
    "hashed_llm_name",
    "llm_function_name",
    "llm_safe_chars",
    "plain_llm_name",
    "safe_llm_name",
]

"""The names a tool gets in each program that shows it to a language model.

A tool name such as ``self.light.set_on`` is a valid MCP name, but LLM function-calling
APIs accept only ``^[a-zA-Z0-9_-]{1,64}$``, so every consumer of a device renames its
tools before the model sees them, each in its own way:

* mcpgen itself (``mcpgen.llm_names.llm_function_name``, which the runtime's ``NameMap``
  and the bridge's ``safe_tool_name`` apply) turns ``.`` into ``__``;
* the stock xiaozhi-esp32-server turns every character outside ``A-Za-z0-9_-`` (in a
  spec name: only ``.``) into ``_`` and keys its tool table by the result, so of two
  tools that map to the same name the model only ever sees one.

``codegen check`` uses this module to refuse specs in which two tools collide under any
of these mappings, or in which a mapped name breaks the LLM rule. mcpgen's mapping and
the LLM rule come from ``mcpgen.llm_names``, the one home the runtime reads too (checking
a spec does not import the runtime); tests/spec/test_spec_consumer_names.py compares the
stock server's mapping with its documented rule.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from mcpgen.llm_names import LLM_NAME_RE, MAX_LLM_NAME, llm_function_name, llm_safe_chars


def xiaozhi_server_name(tool_name: str) -> str:
    """The stock xiaozhi-esp32-server's mapping: ``self.light.set_on`` -> ``self_light_set_on``.

    (It also keeps CJK characters, which spec tool names cannot contain.)
    """
    return llm_safe_chars(tool_name)


@dataclass(frozen=True)
class NameConsumer:
    """A program that shows device tools to a model under names of its own."""

    who: str  # for messages: "mcpgen's LLM names"
    mapping: str  # for messages: "`.` -> `__`"
    consequence: str  # what a collision does there, for the hint
    convert: Callable[[str], str]


CONSUMERS: tuple[NameConsumer, ...] = (
    NameConsumer(
        who="mcpgen's LLM names",
        mapping="`.` -> `__`",
        consequence="mcpgen would have to give one of them a hashed name",
        convert=llm_function_name,
    ),
    NameConsumer(
        who="the stock xiaozhi-esp32-server",
        mapping="`.` -> `_`",
        consequence="the stock xiaozhi-esp32-server keeps only one of them, so the other silently disappears",
        convert=xiaozhi_server_name,
    ),
)


def too_long_for(name: str) -> list[tuple[NameConsumer, str]]:
    """The consumers whose mapped name breaks the LLM function-name rule, with that name."""
    out = []
    for consumer in CONSUMERS:
        mapped = consumer.convert(name)
        if not LLM_NAME_RE.match(mapped):
            out.append((consumer, mapped))
    return out


def max_spec_name_length(name: str) -> int:
    """The longest ``name`` may be with the same number of dots (each dot costs two under mcpgen)."""
    return MAX_LLM_NAME - name.count(".")


def suggest_rename(name: str, others: Collection[str]) -> str:
    """A name close to ``name`` that collides with none of ``others`` under any consumer.

    Appends ``_2``, ``_3``... (or ``2``... after a ``_``) to the last segment: mechanical,
    but always a valid fix the user can then reword. Returns "" when no such name fits the length limit.
    """
    taken = {consumer.convert(o) for o in others for consumer in CONSUMERS}
    sep = "" if name.endswith("_") else "_"  # never `__`, which tool names may not contain
    for n in range(2, 100):
        candidate = f"{name}{sep}{n}"
        if too_long_for(candidate):
            return ""
        if not any(consumer.convert(candidate) in taken for consumer in CONSUMERS):
            return candidate
    return ""

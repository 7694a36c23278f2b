"""One copy, for every device handle, of what devices of one firmware all report alike.

A gateway holds thousands of handles whose devices run the same firmware: each reported
the same ``hello``, the same ``initialize`` result and the same ``tools/list``, and each
handle kept its own parsed copy (about 2 KB per device of small dicts and strings at
10,000 devices; issue 32). Here equal values are looked up by their canonical bytes and
handed out once: handles of equal reports share one object, a device that reports
something else (another firmware, another fingerprint) gets its own.

The shared values are the handles' read-only views (``Device.hello``,
``initialize_result``, ``server_info``, ``capabilities`` and the tool tables); code that
wants to change one copies it first. Each cache keeps at most :data:`MAX_SHARED`
distinct values for the process's life (a fleet has a few firmware versions): past that
new values are not shared, so devices that report something unique each (a serial
number in ``serverInfo``) cost what they did before and nothing more.
"""

from __future__ import annotations

from typing import Any, TypeVar

from mcpgen.runtime.core import wire

#: Distinct values each cache keeps (then new ones are used unshared).
MAX_SHARED = 256

_JSON: dict[bytes, Any] = {}
_TABLES: dict[tuple[int, ...], tuple[list, dict, dict, dict]] = {}
T = TypeVar("T")


def shared_json(value: T) -> T:
    """``value`` (parsed JSON), or the equal value handed out before."""
    try:
        key = wire.dumps_sorted(value)
    except Exception:  # not serialisable (cannot happen for parsed JSON): not shared
        return value
    got = _JSON.get(key)
    if got is not None:
        return got
    if len(_JSON) < MAX_SHARED:
        _JSON[key] = value
    return value


def tool_tables(tools: list, kind_of: Any) -> tuple[list, dict, dict, dict]:
    """``(tools, by name, return kind by name, validators)`` for a tool list, shared by
    every handle whose list holds the same tools in the same order. The tools themselves
    are already one object per distinct description (``session_setup``), so the list is
    keyed by their identities; the entry holds them, so those identities stay theirs.
    ``validators`` starts empty: handles add each tool's argument validator (built from
    the tool's schema alone) on its first validated call, once for all of them."""
    key = tuple(map(id, tools))
    got = _TABLES.get(key)
    if got is not None:
        return got
    tables: tuple[list, dict, dict, dict] = (
        list(tools),
        {t.name: t for t in tools},
        {t.name: kind_of(t) for t in tools},
        {},
    )
    if len(_TABLES) < MAX_SHARED:
        _TABLES[key] = tables
    return tables


__all__ = ["MAX_SHARED", "shared_json", "tool_tables"]

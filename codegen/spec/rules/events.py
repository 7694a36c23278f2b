"""The ``events:`` section of a spec: device-initiated notifications with typed parameters.

::

    events:
      button_pressed:
        description: The user pressed the device button.
        params:
          count: {type: integer, min: 1, max: 10}

Each event is sent by the device as the JSON-RPC notification
``notifications/events/<name>`` whose ``params`` object holds every parameter (events
have no optional parameters: the device always sends all of them). Parameters follow
the rules of tool parameters (``SpecChecker.params``: same types, ranges, enums,
max_length, patterns and error messages); this module adds what is particular to
events and reports through the same checker, so errors carry file:line and hints.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional

import yaml

from mcpgen.codegen.spec.model import Event, Param
from mcpgen.codegen.spec.names import CPP_KEYWORDS, PYTHON_RESERVED, python_path

if TYPE_CHECKING:  # the checker imports this module
    from mcpgen.codegen.spec.rules.tools import ToolEntry
    from mcpgen.codegen.spec.rules.top import SpecChecker

EVENT_KEYS = ("description", "params")
NO_DEFAULT = "event parameters have no default: the device always sends every parameter"
# Lowercase snake case: the name becomes a C++ function (emit_<name>), a Python method
# (events.<name>(), on_<name>) and part of the notification method.
EVENT_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
# Attributes of the generated device class an event's `on_<name>` must not take.
BINDINGS_RESERVED = frozenset({"events", "device", "FINGERPRINT", "SPEC", "DEVICE_NAME", "DEVICE_VERSION"})


def _suggest_name(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    s = re.sub(r"[^a-z0-9_]", "_", s.lower()).strip("_")
    s = re.sub(r"_+", "_", s)
    if s and not s[0].isalpha():
        s = "on_" + s
    return s[:63] or "my_event"


def event_name_problem(name: str) -> Optional[tuple[str, str]]:
    """(problem, hint) when ``name`` cannot name an event, else None."""
    if not EVENT_NAME_RE.match(name):
        return (
            "is not a lowercase identifier of at most 63 characters",
            f"event names become C++ and Python names; write it like `{_suggest_name(name)}`",
        )
    if "__" in name:
        return ("contains `__`", "`__` is reserved in C++; use a single `_`")
    if name in PYTHON_RESERVED or name in CPP_KEYWORDS:
        return ("is a reserved word in Python or C++", f"rename it, e.g. `{name}_event`")
    return None


def check_events(checker: SpecChecker, node: yaml.Node, tools: list[ToolEntry]) -> tuple[Event, ...]:
    """Validates the ``events`` mapping; returns the events that validated (declared order)."""
    if isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null") and node.style is None:
        return ()  # `events:` with nothing after it
    m = checker.mapping(node, "events", what="a mapping of event name to event")
    if m is None:
        return ()
    out: list[Event] = []
    for name, (key_node, value_node) in m.items():
        event = _event(checker, name, key_node, value_node)
        if event is not None:
            out.append(event)
    _check_bindings_names(checker, m, tools)
    return tuple(out)


def _event(checker: SpecChecker, name: str, key_node: yaml.Node, node: yaml.Node) -> Optional[Event]:
    path = f"events.{name}" if re.fullmatch(r"[A-Za-z0-9_\-]+", name) else f"events[{name!r}]"
    n_errors = len(checker.errors)
    problem = event_name_problem(name)
    if problem:
        checker.error(key_node, path, f"event name `{name}` {problem[0]}", problem[1])
    m = checker.mapping(
        node,
        path,
        allowed=EVENT_KEYS,
        required=("description",),
        what="an event mapping",
        key_hint={
            "returns": "events carry parameters only: the backend does not answer them",
            "name": f"the key above (`{name}`) is the event's name; remove `name`",
        },
        missing_hints={"description": "add `description: ...`: say when the device sends it"},
    )
    if m is None:
        return None
    description: Any = ""
    if "description" in m:
        description = checker.string(m["description"][1], f"{path}.description")
    params: tuple[Param, ...] = ()
    if "params" in m:
        params = checker.params(m["params"][1], f"{path}.params", no_default=NO_DEFAULT)
    if len(checker.errors) != n_errors or not isinstance(description, str):
        return None
    return Event(name=name, description=description, params=params, pos=checker.pos(key_node))


def _check_bindings_names(
    checker: SpecChecker, events: dict[str, tuple[yaml.Node, yaml.Node]], tools: list[ToolEntry]
) -> None:
    """The Python bindings add ``events`` and ``on_<event>`` to the device class: no tool may
    take those attributes (tools at the top level become methods or namespaces there)."""
    roots: dict[str, ToolEntry] = {}
    for info in tools:
        if info.name is not None:
            path = python_path(info.name)
            if path:
                roots.setdefault(path[0], info)
    if "events" in roots and events:
        info = roots["events"]
        first_key = next(iter(events.values()))[0]
        checker.error(
            first_key,
            "events",
            f"the Python bindings put events under `device.events`, but tools[{info.index}] "
            f"`{info.name}` uses that name",
            f"rename the tool, e.g. `{info.name.replace('events', 'event_log', 1)}`",  # type: ignore[union-attr]
        )
    for name, (key_node, _value) in events.items():
        attr = f"on_{name}"
        info_or_none = roots.get(attr)
        if info_or_none is not None:
            checker.error(
                key_node,
                f"events.{name}",
                f"the Python callback method `device.{attr}` of event `{name}` collides with "
                f"tools[{info_or_none.index}] `{info_or_none.name}`",
                "rename the event or the tool",
            )
        if attr in BINDINGS_RESERVED:
            checker.error(key_node, f"events.{name}", f"`{attr}` is reserved in the bindings", "rename it")

"""Find where a field of a spec is written: the ``file:line:col`` that ``codegen diff`` and the
release checks report for a change.

The model carries positions only for tools, parameters and events; a change can be about any
field (a range bound, a result property, ``device.version``) or about something that is gone
(then the nearest enclosing field that still exists is the place to look). So we compose the
YAML again and walk its nodes by a path of steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

import yaml

from mcpgen.codegen.spec.yaml_source import YamlSyntaxError, compose


@dataclass(frozen=True)
class ToolStep:
    """The entry of the ``tools`` list whose ``name`` is ``name``."""

    name: str


Step = Union[str, ToolStep]


class SpecLocator:
    """Positions of fields in one spec file (``locate`` never fails: it falls back to 1:1).

    Each mapping's keys and each list's tool names are indexed the first time a step
    looks into it, so locating every change of a spec with 100,000 tools stays linear
    (a scan per step made it quadratic: ``codegen diff`` of such a spec ran past 60 s)."""

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        try:
            self._root: Optional[yaml.Node] = compose(text)
        except YamlSyntaxError:
            self._root = None
        self._index: dict[int, dict[str, tuple[yaml.Node, yaml.Node]]] = {}
        #: How many child entries the index has read (the work of locating, for the tests).
        self.entries_read = 0

    def locate(self, steps: tuple[Step, ...]) -> tuple[int, int]:
        """1-based (line, column) of the deepest node of ``steps`` present in the file: the key
        of a mapping entry, or the start of a list item."""
        node = self._root
        best = (1, 1)
        for step in steps:
            found = self._child(node, step)
            if found is None:
                break
            mark_node, node = found
            best = (mark_node.start_mark.line + 1, mark_node.start_mark.column + 1)
        return best

    def _child(self, node: Optional[yaml.Node], step: Step) -> Optional[tuple[yaml.Node, yaml.Node]]:
        """(node to point at, node to descend into) for one step, or None when absent."""
        if node is None:
            return None
        if isinstance(step, ToolStep):
            if not isinstance(node, yaml.SequenceNode):
                return None
            return self._children(node).get(step.name)
        if not isinstance(node, yaml.MappingNode):
            return None
        return self._children(node).get(step)

    def _children(self, node: yaml.Node) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        """A mapping's entries by key, or a list's mapping items by their ``name`` (the
        first one wins, as a scan from the top would find it)."""
        index = self._index.get(id(node))
        if index is not None:
            return index
        index = {}
        if isinstance(node, yaml.SequenceNode):
            for item in node.value:
                self.entries_read += 1
                if isinstance(item, yaml.MappingNode):
                    for k, v in item.value:
                        if k.value == "name" and isinstance(v, yaml.ScalarNode):
                            index.setdefault(v.value, (item, item))
                            break
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                self.entries_read += 1
                if isinstance(k, yaml.ScalarNode):
                    index.setdefault(k.value, (k, v))
        self._index[id(node)] = index
        return index


def read_text(path: str) -> str:
    """The file's text for locating, "" when it cannot be read (positions fall back to 1:1)."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return ""


__all__ = ["SpecLocator", "Step", "ToolStep", "read_text"]

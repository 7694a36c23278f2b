"""Rules for one tool: its keys, name, handler and annotations."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

import yaml

from mcpgen.codegen.spec.consumer_names import max_spec_name_length, too_long_for
from mcpgen.codegen.spec.model import (
    Param,
    Returns,
    Tool,
)
from mcpgen.codegen.spec.names import (
    IDENTIFIER_RE,
    MCP_TOOL_NAME_RE,
    PYTHON_RESERVED,
    cpp_handler_name,
    python_path,
)
from mcpgen.codegen.spec.rules.base import (
    BAD,
)
from mcpgen.codegen.spec.rules.names import (
    cpp_identifier_problem,
)
from mcpgen.codegen.spec.rules.params import ParamRules
from mcpgen.codegen.spec.rules.returns import ReturnRules
from mcpgen.codegen.spec.rules.tables import (
    TOOL_KEYS,
    TOOL_REQUIRED,
)
from mcpgen.llm_names import MAX_LLM_NAME


@dataclass
class ToolEntry:
    """One `tools[]` entry as the checker read it: what the cross-tool checks need to know
    (whatever validated). The runtime's `mcpgen.runtime.ToolInfo` is a device's tool."""

    index: int
    node: yaml.Node
    name: Optional[str] = None
    name_node: Optional[yaml.Node] = None
    handler: Optional[str] = None
    handler_node: Optional[yaml.Node] = None
    handler_explicit: bool = False
    model: Optional[Tool] = None


class ToolRules(ParamRules, ReturnRules):
    # -- tools -----------------------------------------------------------------------------

    def tool(self, node: yaml.Node, index: int) -> ToolEntry:
        path = f"tools[{index}]"
        info = ToolEntry(index=index, node=node)
        m = self.mapping(node, path, allowed=TOOL_KEYS, required=TOOL_REQUIRED, what="a tool mapping")
        if m is None:
            return info
        n_errors = len(self.errors)
        if "name" in m:
            name_node = m["name"][1]
            name = self.string(name_node, f"{path}.name")
            if name is not BAD and self.check_tool_name(name, name_node, f"{path}.name"):
                info.name, info.name_node = name, name_node
        description = ""
        if "description" in m:
            description = self.string(m["description"][1], f"{path}.description")
        title = None
        if "title" in m:
            title = self.string(m["title"][1], f"{path}.title")
        flags: dict[str, Any] = {}
        for key in ("user_only", "read_only", "destructive", "idempotent", "progress"):
            if key in m:
                flags[key] = self.boolean(m[key][1], f"{path}.{key}")
        confirm = None
        if "confirm" in m:
            confirm = self.string(m["confirm"][1], f"{path}.confirm")
            if isinstance(confirm, str):
                confirm = confirm.strip()
        params: tuple[Param, ...] = ()
        if "params" in m:
            params = self.params(m["params"][1], f"{path}.params", named_types=True)
        returns: Any = Returns(kind="none")
        if "returns" in m:
            returns = self.returns(m["returns"][1], f"{path}.returns")
        if "handler" in m:
            hnode = m["handler"][1]
            handler = self.string(hnode, f"{path}.handler")
            if handler is not BAD:
                problem = cpp_identifier_problem(handler)
                if problem:
                    self.error(
                        hnode,
                        f"{path}.handler",
                        f"handler `{handler}` {problem}",
                        "choose another C++ function name",
                    )
                else:
                    info.handler, info.handler_node, info.handler_explicit = handler, hnode, True
        elif info.name is not None:
            handler = cpp_handler_name(info.name)
            problem = cpp_identifier_problem(handler)
            if problem:
                self.error(
                    info.name_node,
                    f"{path}.name",
                    f"C++ handler name `{handler}` derived from `{info.name}` {problem}",
                    "rename the tool or set `handler:` to a valid C++ function name",
                )
            else:
                info.handler, info.handler_node = handler, info.name_node
        if len(self.errors) == n_errors and info.name is not None and info.handler is not None:
            info.model = Tool(
                name=info.name,
                description=description,
                handler=info.handler,
                params=params,
                returns=returns,
                title=title,
                user_only=flags.get("user_only", False),
                read_only=flags.get("read_only"),
                destructive=flags.get("destructive"),
                idempotent=flags.get("idempotent"),
                progress=flags.get("progress") is True,
                confirm=confirm,
                pos=self.pos(node),
            )
        return info

    def check_tool_name(self, name: str, node: yaml.Node, path: str) -> bool:
        if not MCP_TOOL_NAME_RE.match(name):
            bad = sorted({c for c in name if not re.match(r"[A-Za-z0-9_.\-]", c)})
            if len(name) > 128:
                detail = f"is {len(name)} characters long (at most 128)"
            elif bad:
                detail = "contains " + " ".join(repr(c) for c in bad)
            else:
                detail = "is empty"
            self.error(
                node,
                path,
                f"tool name `{name}` is not a valid MCP tool name: it {detail}",
                "use letters, digits, `_`, `-` and `.` (1 to 128 characters), like self.light.set_rgb",
            )
            return False
        if "__" in name:
            self.error(
                node,
                path,
                f"tool name `{name}` contains `__`",
                "`__` is reserved: LLM function names map `.` to `__`; use a single `_`",
            )
            return False
        too_long = too_long_for(name)
        if too_long:
            consumer, mapped = too_long[0]
            also = "".join(f" and {len(m)} for {c.who} ({c.mapping})" for c, m in too_long[1:])
            self.error(
                node,
                path,
                f"tool name `{name}` is too long for LLM function calling: it becomes `{mapped}`, "
                f"{len(mapped)} characters for {consumer.who} ({consumer.mapping}){also}; "
                f"LLM APIs accept at most {MAX_LLM_NAME}",
                f"shorten it to at most {max_spec_name_length(name)} characters "
                "(each `.` counts twice, as mcpgen turns it into `__`)",
            )
            return False
        for seg in python_path(name):
            if not seg:
                self.error(
                    node,
                    path,
                    f"tool name `{name}` has an empty dotted segment",
                    "remove the leading, trailing or doubled `.`",
                )
                return False
            if not IDENTIFIER_RE.match(seg):
                self.error(
                    node,
                    path,
                    f"tool name `{name}`: segment `{seg}` is not a Python identifier",
                    "segments of the name become Python attributes; start each with a letter or `_`",
                )
                return False
            if seg in PYTHON_RESERVED:
                self.error(
                    node,
                    path,
                    f"tool name `{name}`: segment `{seg}` is a reserved word in Python",
                    f"segments become Python attributes; rename it, e.g. `{seg}_`",
                )
                return False
        return True

"""Rules across tools: unique names and handlers, names that collide once a consumer
(an LLM API, the stock xiaozhi server) rewrites them, and tools/list page sizes.
"""

from __future__ import annotations

from mcpgen.codegen.spec.consumer_names import (
    CONSUMERS,
    NameConsumer,
    suggest_rename,
)
from mcpgen.codegen.spec.mcp_json import worst_case_page_bytes
from mcpgen.codegen.spec.model import (
    DeviceSpec,
    ObjectType,
    Spec,
)
from mcpgen.codegen.spec.names import (
    cpp_args_struct,
    python_path,
)
from mcpgen.codegen.spec.rules.base import (
    CheckerBase,
)
from mcpgen.codegen.spec.rules.tools import ToolEntry


class CrossToolRules(CheckerBase):
    # -- across tools ----------------------------------------------------------------------

    def cross_check(self, infos: list[ToolEntry]) -> None:
        by_name: dict[str, ToolEntry] = {}
        by_handler: dict[str, ToolEntry] = {}
        by_struct: dict[str, ToolEntry] = {}
        by_path: dict[tuple[str, ...], ToolEntry] = {}
        by_consumer: list[dict[str, ToolEntry]] = [{} for _ in CONSUMERS]
        clashed: set[int] = set()
        for info in infos:
            if info.name is None:
                continue
            path = f"tools[{info.index}]"
            first = by_name.get(info.name)
            if first is not None:
                self.error(
                    info.name_node,
                    f"{path}.name",
                    f"duplicate tool name `{info.name}` (first at tools[{first.index}], "
                    f"line {first.name_node.start_mark.line + 1})",  # type: ignore[union-attr]
                    "tool names must be unique; rename or remove one",
                )
                continue
            by_name[info.name] = info
            if self.consumer_name_clash(info, infos, by_consumer):
                clashed.add(info.index)
                continue  # renaming fixes the C++ and Python collisions too: report this one only
            if info.handler is not None:
                hpath = f"{path}.handler" if info.handler_explicit else f"{path}.name"
                other = by_handler.get(info.handler)
                if other is not None:
                    self.error(
                        info.handler_node,
                        hpath,
                        f"C++ handler `{info.handler}` of `{info.name}` collides with "
                        f"tools[{other.index}] `{other.name}`",
                        "rename one tool or set `handler:` to a distinct C++ function name",
                    )
                else:
                    by_handler[info.handler] = info
                    struct = cpp_args_struct(info.handler)
                    other = by_struct.get(struct)
                    if other is not None:
                        self.error(
                            info.handler_node,
                            hpath,
                            f"C++ arguments struct `{struct}` of `{info.name}` collides with "
                            f"tools[{other.index}] `{other.name}`",
                            "handler names that differ only in `_` and case give the same struct; "
                            "set `handler:` to a distinct name",
                        )
                    else:
                        by_struct[struct] = info
            by_path.setdefault(python_path(info.name), info)
        # Python bindings: device.<a>.<b>(): a tool's path must not equal or prefix another's.
        for info in infos:
            if info.name is None or by_name.get(info.name) is not info or info.index in clashed:
                continue
            tpath = python_path(info.name)
            attr = "device." + ".".join(tpath)
            other = by_path.get(tpath)
            if other is not None and other is not info:
                self.error(
                    info.name_node,
                    f"tools[{info.index}].name",
                    f"Python binding `{attr}` of `{info.name}` collides with "
                    f"tools[{other.index}] `{other.name}`",
                    "rename one of the tools (`-` and `_` map to the same Python name)",
                )
                continue
            for k in range(1, len(tpath)):
                other = by_path.get(tpath[:k])
                if other is None:
                    continue
                prefix = "device." + ".".join(tpath[:k])
                if info.index > other.index:
                    where, message = (
                        info,
                        (
                            f"`{info.name}` needs `{prefix}` as a namespace, but it is the method of "
                            f"tools[{other.index}] `{other.name}`"
                        ),
                    )
                else:
                    where, message = (
                        other,
                        (
                            f"the Python method `{prefix}` of `{other.name}` is already a namespace of "
                            f"tools[{info.index}] `{info.name}`"
                        ),
                    )
                self.error(
                    where.name_node,
                    f"tools[{where.index}].name",
                    message,
                    f"no tool name may be a dotted prefix of another; rename `{other.name}`, "
                    f"e.g. to `{other.name}.get`",
                )

    def consumer_name_clash(
        self, info: ToolEntry, infos: list[ToolEntry], by_consumer: list[dict[str, ToolEntry]]
    ) -> bool:
        """Report ``info`` if its name maps to an earlier tool's under some consumer's mapping.

        Registers the mapped names of ``info`` otherwise; returns True when it reported.
        """
        assert info.name is not None
        clashes: list[tuple[NameConsumer, str, ToolEntry]] = []
        for consumer, seen in zip(CONSUMERS, by_consumer, strict=True):
            mapped = consumer.convert(info.name)
            first = seen.get(mapped)
            if first is None:
                seen[mapped] = info
            else:
                clashes.append((consumer, mapped, first))
        if not clashes:
            return False
        other = clashes[0][2]
        how = "; ".join(
            f"both become `{mapped}` for {consumer.who} ({consumer.mapping})"
            for consumer, mapped, first in clashes
            if first is other
        )
        consequences = "; ".join(c.consequence for c, _, first in clashes if first is other)
        names = [i.name for i in infos if i.name is not None and i is not info]
        suggestion = suggest_rename(info.name, names)
        example = f", e.g. `{suggestion}`" if suggestion else ""
        self.error(
            info.name_node,
            f"tools[{info.index}].name",
            f"tool name `{info.name}` collides with tools[{other.index}] `{other.name}` "
            f"(line {other.name_node.start_mark.line + 1}) as an LLM function name: {how}",  # type: ignore[union-attr]
            f"{consequences}; rename one so the names differ in more than `.` versus `_`{example}",
        )
        return True

    def check_page_size(
        self, page_size: int, infos: list[ToolEntry], types: tuple[ObjectType, ...] = ()
    ) -> None:
        built = [(i, i.model) for i in infos if i.model is not None]
        if not built:
            return
        probe = Spec(
            device=DeviceSpec(name="probe", version="0", page_size=page_size),
            tools=tuple(t for _, t in built),
            types=types,
        )
        sizes = [(info, tool, worst_case_page_bytes(tool, probe)) for info, tool in built]
        needed = max(size for _, _, size in sizes)
        for info, tool, size in sizes:
            if size > page_size:
                self.error(
                    info.node,
                    f"tools[{info.index}]",
                    f"the tools/list entry of `{tool.name}` needs a {size}-byte page, "
                    f"more than page_size ({page_size})",
                    f"set device.page_size to at least {needed}, or shorten the tool's description",
                )

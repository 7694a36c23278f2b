"""The user's handlers file: where it lives, which handlers it lacks, stubs for new tools.

The one place the generator reads and writes a file of the user's (emitters never do:
the starter's text is ``emit_cpp.starter_handlers``, the appended stubs' ``emit_cpp.handler_stubs``).

``<spec stem>_handlers.cpp`` beside the spec belongs to the user: codegen writes a
starter once and afterwards only ever *appends* (``codegen build --add-missing-handlers``).
Before anything is compiled, ``check_handlers`` looks for a definition of every tool's
handler so a tool added to the YAML is reported with its spec line and the exact C++
signature to write, instead of surfacing as an ``undefined reference`` from the linker.

The same check reports the other direction, before compiling too: a handler whose tool
is gone from the spec (removed or renamed) still names the args struct the generated
header no longer declares, which g++ would report as ``'GetStatusArgs' does not name a
type``; instead the error names the handler, its file:line and the tool it served.

A handler of a tool that is still there but whose parameter was renamed reads a member
its args struct no longer has (``args.red`` after ``red`` became ``r``), which g++ would
report as ``'const LightSetRgbArgs' has no member named 'red'``; instead the error names
the handlers file line, the old member, the tool's parameter it probably became (the one
the body does not read) and the fix.

The check reads C++ with a regular expression, not a compiler: a handler counts as
defined when its name is followed by a parameter list whose first parameter is the
tool's args struct (``light_set(const LightSetArgs& args, ...``), in the handlers file or
in a local file it ``#include``s with quotes. That is what the starter and the stubs
write, and what the header's prototype forces a definition to look like. A handler
defined some other way (a macro, say) is not seen: ``MCPGEN_NO_HANDLER_CHECK=1`` turns the
check off and leaves it to the linker.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mcpgen.codegen.emit.literals import cpp_field_name
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.log import Log
from mcpgen.codegen.spec.model import Spec, Tool
from mcpgen.codegen.spec.names import cpp_args_struct
from mcpgen.codegen.spec.ota import is_builtin
from mcpgen.codegen.targets.writer import write_once

# Comments and literals, so a handler named only in a comment or string does not count.
_CPP_TOKENS = re.compile(
    r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""",
    re.DOTALL,
)
_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
_MAX_INCLUDE_DEPTH = 4
NO_CHECK_ENV = "MCPGEN_NO_HANDLER_CHECK"


def handlers_path(spec_path: Path) -> Path:
    """Where the user's handlers live: ``<spec stem>_handlers.cpp`` beside the spec."""
    return Path(spec_path).parent / f"{Path(spec_path).stem}_handlers.cpp"


def signature(tool: Tool) -> str:
    """The exact definition line the generated ``mcp_tools.h`` declares for ``tool``."""
    return f"mcpgen::Result {tool.handler}(const {cpp_args_struct(tool.handler)}& args, mcpgen::Context& ctx)"


def _code_of(path: Path, seen: set[Path], depth: int = 0) -> str:
    """``path`` without comments and literals, followed by its local quoted includes."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    seen.add(path.resolve())
    code = _CPP_TOKENS.sub(lambda m: " " if m.group(0)[0] == "/" else '""', text)
    parts = [code]
    if depth < _MAX_INCLUDE_DEPTH:
        for name in _LOCAL_INCLUDE.findall(text):
            inc = path.parent / name
            if inc.name != "mcp_tools.h" and inc.is_file() and inc.resolve() not in seen:
                parts.append(_code_of(inc, seen, depth + 1))
    return "\n".join(parts)


def _defines(code: str, tool: Tool) -> bool:
    struct = re.escape(cpp_args_struct(tool.handler))
    pattern = rf"\b{re.escape(tool.handler)}\s*\(\s*(?:\[\[[^\]]*\]\]\s*)?(?:const\s+)?(?:::)?{struct}\b"
    return re.search(pattern, code) is not None


def _blank(text: str) -> str:
    """``text`` with comments and literals blanked but every newline kept (for line numbers)."""

    def keep_lines(m: re.Match[str]) -> str:
        tok = m.group(0)
        filler = " " if tok[0] == "/" else '""'
        return filler + "\n" * tok.count("\n")

    return _CPP_TOKENS.sub(keep_lines, text)


def _local_files(path: Path, seen: set[Path], depth: int = 0) -> list[tuple[Path, str]]:
    """``path`` and the local files it quote-includes (as ``_code_of``), with their text."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    seen.add(path.resolve())
    out = [(path, text)]
    if depth < _MAX_INCLUDE_DEPTH:
        for name in _LOCAL_INCLUDE.findall(text):
            inc = path.parent / name
            if inc.name != "mcp_tools.h" and inc.is_file() and inc.resolve() not in seen:
                out += _local_files(inc, seen, depth + 1)
    return out


# A definition shaped like a handler: `name(const NameArgs& ...`, optionally `tools::`-qualified.
_HANDLER_DEF = re.compile(
    r"\b([A-Za-z_]\w*)\s*\(\s*(?:\[\[[^\]]*\]\]\s*)?(?:const\s+)?(?:(?:::)?tools::|::)?([A-Za-z_]\w*Args)\s*&"
)
_TYPE_DEF = re.compile(r"\b(?:struct|class|using|typedef)\s+(?:[\w:<>,\s]*?\s)?([A-Za-z_]\w*Args)\b")
_TOOL_COMMENT = re.compile(r"^\s*//\s*(\S+\.\S+)\s*$")


@dataclass(frozen=True)
class OrphanedHandler:
    """A handler in the handlers file whose tool the spec no longer has."""

    handler: str
    struct: str
    file: str
    line: int
    tool: str  # the tool it served, from the `// <tool>` comment above it ("" if none)

    def format(self) -> str:
        served = f"tool `{self.tool}`" if self.tool else f"the tool whose handler is `{self.handler}`"
        return (
            f"{self.file}:{self.line}: handler `{self.handler}` has no tool in the spec: {served} was "
            f"removed or renamed, so the generated mcp_tools.h no longer declares `{self.struct}`;\n"
            f"    delete the handler (or rename it with its tool), or put the tool back in the spec"
        )


def _tool_comment(lines: list[str], index: int) -> str:
    """The ``// self.x.y`` comment right above line ``index`` (blank lines skipped), or ""."""
    i = index - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    m = _TOOL_COMMENT.match(lines[i]) if i >= 0 else None
    return m.group(1) if m else ""


def orphaned_handlers(spec: Spec, path: Path) -> list[OrphanedHandler]:
    """Handlers (``name(const NameArgs& ...)``, the shape the starter and the stubs write) in
    ``path`` and its local includes whose args struct belongs to no tool of ``spec``."""
    files = _local_files(Path(path), set())
    wanted = {cpp_args_struct(t.handler) for t in spec.tools}
    own_types = {m.group(1) for _, text in files for m in _TYPE_DEF.finditer(_blank(text))}
    out: list[OrphanedHandler] = []
    for file, text in files:
        code = _blank(text)
        lines = text.splitlines()
        for m in _HANDLER_DEF.finditer(code):
            handler, struct = m.group(1), m.group(2)
            if struct in wanted or struct in own_types or cpp_args_struct(handler) != struct:
                continue
            line = code.count("\n", 0, m.start()) + 1
            out.append(OrphanedHandler(handler, struct, str(file), line, _tool_comment(lines, line - 1)))
    return out


@dataclass(frozen=True)
class StaleMember:
    """A handler reading a member its tool's args struct no longer has (a renamed parameter)."""

    handler: str
    tool: str
    struct: str
    member: str  # the old parameter, as the handler reads it
    renamed_to: str  # the tool's parameter the handler does not read ("" when not one)
    params: tuple[str, ...]  # every parameter the struct has, as members
    file: str
    line: int

    def format(self) -> str:
        if self.renamed_to:
            fix = (
                f"parameter `{self.member}` of tool `{self.tool}` is now `{self.renamed_to}`: "
                f"read `args.{self.renamed_to}` instead of `args.{self.member}`"
            )
        else:
            have = ", ".join(f"`{p}`" for p in self.params) or "none"
            fix = (
                f"tool `{self.tool}` has no parameter `{self.member}` any more (its parameters: {have}): "
                f"read one of those, or put `{self.member}` back in the spec"
            )
        return (
            f"{self.file}:{self.line}: handler `{self.handler}` reads `args.{self.member}`, which "
            f"`{self.struct}` no longer has;\n    {fix}"
        )


def _body_end(code: str, start: int) -> int:
    """The index just past the ``}`` closing the block opened at or after ``start``, or -1."""
    opening = code.find("{", start)
    if opening < 0 or code.find(";", start, opening) >= 0:
        return -1  # a declaration, not a definition
    depth = 0
    for i in range(opening, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def stale_members(spec: Spec, path: Path) -> list[StaleMember]:
    """Members a handler reads from its args (``args.<name>``) that the tool's args struct
    does not have: parameters renamed or removed in the spec since the handler was written."""
    tools = {cpp_args_struct(t.handler): t for t in spec.tools if not is_builtin(spec, t)}
    out: list[StaleMember] = []
    for file, text in _local_files(Path(path), set()):
        code = _blank(text)
        for m in _HANDLER_DEF.finditer(code):
            tool = tools.get(m.group(2))
            if tool is None or m.group(1) != tool.handler:
                continue
            param = re.match(r"\s*(?:\[\[[^\]]*\]\]\s*)?([A-Za-z_]\w*)", code[m.end() :])
            end = _body_end(code, m.end())
            if param is None or end < 0:
                continue
            body_start = code.find("{", m.end())
            body = code[body_start:end]
            fields = [cpp_field_name(p.name) for p in tool.params]
            read = re.compile(rf"\b{re.escape(param.group(1))}\s*(?:\.|->)\s*([A-Za-z_]\w*)")
            used = {r.group(1) for r in read.finditer(body)}
            unread = [f for f in fields if f not in used]
            for r in read.finditer(body):
                member = r.group(1)
                if member in fields or any(s.member == member and s.handler == tool.handler for s in out):
                    continue
                line = code.count("\n", 0, body_start + r.start()) + 1
                out.append(
                    StaleMember(
                        tool.handler,
                        tool.name,
                        m.group(2),
                        member,
                        unread[0] if len(unread) == 1 else "",
                        tuple(fields),
                        str(file),
                        line,
                    )
                )
    return out


class StaleMembersError(BuildError):
    """Raised before compiling when a handler reads parameters its tool no longer has."""

    def __init__(self, handlers: Path, stale: Iterable[StaleMember]) -> None:
        self.handlers = handlers
        self.stale = list(stale)
        n = len(self.stale)
        lines = [
            f"{handlers}: {n} read{'s' if n != 1 else ''} of parameters the spec no longer has "
            "(nothing was compiled)",
            *(s.format() for s in self.stale),
        ]
        super().__init__("\n".join(lines))


def missing_handlers(spec: Spec, path: Path) -> list[Tool]:
    """The tools of ``spec`` whose handler ``path`` (and its local includes) does not define."""
    code = _code_of(Path(path), set())
    return [t for t in spec.tools if not is_builtin(spec, t) and not _defines(code, t)]


@dataclass(frozen=True)
class MissingHandler:
    """One tool without a handler: where the spec declares it and what to write."""

    tool: str
    spec_file: str
    line: int
    column: int
    handler: str
    signature: str

    def format(self) -> str:
        where = f"{self.spec_file}:{self.line}:{self.column}" if self.line else self.spec_file
        return f"{where}: tool `{self.tool}` has no handler; add:\n    {self.signature} {{ ... }}"


class MissingHandlersError(BuildError):
    """Raised before compiling when the handlers file lacks handlers; ``missing`` lists them."""

    def __init__(
        self,
        handlers: Path,
        spec_path: Path,
        missing: Iterable[MissingHandler],
        orphans: Iterable[OrphanedHandler] = (),
    ) -> None:
        self.handlers = handlers
        self.missing = list(missing)
        self.orphans = list(orphans)
        n = len(self.missing)
        lines = [
            f"{handlers}: {n} handler{'s' if n != 1 else ''} missing (nothing was compiled)",
            *(m.format() for m in self.missing),
            "  inside `namespace tools { ... }` of that file, or append starter stubs with:",
            f"    codegen build {spec_path} --add-missing-handlers",
            *(o.format() for o in self.orphans),
        ]
        super().__init__("\n".join(lines))


class OrphanedHandlersError(BuildError):
    """Raised before compiling when the handlers file still has handlers of tools the spec
    no longer declares; ``orphans`` lists them."""

    def __init__(self, handlers: Path, orphans: Iterable[OrphanedHandler]) -> None:
        self.handlers = handlers
        self.orphans = list(orphans)
        n = len(self.orphans)
        lines = [
            f"{handlers}: {n} handler{'s' if n != 1 else ''} of tools the spec no longer has "
            "(nothing was compiled)",
            *(o.format() for o in self.orphans),
        ]
        super().__init__("\n".join(lines))


def describe_missing(spec: Spec, spec_path: Path, tools: Iterable[Tool]) -> list[MissingHandler]:
    out = []
    for t in tools:
        pos = t.pos
        out.append(
            MissingHandler(
                tool=t.name,
                spec_file=pos.file if pos else str(spec_path),
                line=pos.line if pos else 0,
                column=pos.column if pos else 0,
                handler=t.handler,
                signature=signature(t),
            )
        )
    return out


def check_handlers(spec: Spec, spec_path: Path, path: Path | None = None) -> None:
    """Raises ``MissingHandlersError`` when a tool of ``spec`` has no handler in its file
    (listing orphaned handlers too: a renamed tool shows as both), else
    ``OrphanedHandlersError`` when the file has handlers of tools the spec lacks, else
    ``StaleMembersError`` when a handler reads a parameter its tool no longer has."""
    path = handlers_path(spec_path) if path is None else Path(path)
    missing = missing_handlers(spec, path)
    orphans = orphaned_handlers(spec, path)
    if missing:
        raise MissingHandlersError(path, Path(spec_path), describe_missing(spec, spec_path, missing), orphans)
    if orphans:
        raise OrphanedHandlersError(path, orphans)
    stale = stale_members(spec, path)
    if stale:
        raise StaleMembersError(path, stale)


def append_missing(spec: Spec, spec_path: Path, log: Log = print) -> list[Tool]:
    """Appends a stub for every tool whose handler is missing; the rest of the file is kept
    byte for byte. Returns the tools that got a stub."""
    path = handlers_path(spec_path)
    missing = missing_handlers(spec, path)
    if not missing:
        return []
    from mcpgen.codegen.emit import cpp as emit_cpp  # (here: `codegen check` needs no emitter)

    text = path.read_text(encoding="utf-8")
    sep = "" if text.endswith("\n") or not text else "\n"
    with path.open("a", encoding="utf-8") as f:
        f.write(sep + emit_cpp.handler_stubs(missing, Path(spec_path).name))
    for t in missing:
        log(f"added a stub for {t.name} to {path}: implement tools::{t.handler} there")
    return missing


def ensure_handlers(spec: Spec, spec_path: Path, log: Log, *, check: bool = True) -> Path:
    """Writes the starter handlers file beside the spec unless it exists (the emitted
    ``emit_cpp.starter_handlers``), then (``check``, what every build does) raises
    ``MissingHandlersError`` before anything is compiled if a tool has no handler. The file
    belongs to the user from then on: it is never overwritten. Returns the handlers path."""
    path = handlers_path(spec_path)
    from mcpgen.codegen.emit import cpp as emit_cpp  # (here: `codegen check` needs no emitter)

    if write_once(path, emit_cpp.starter_handlers(spec, Path(spec_path).name)):
        log(f"wrote starter handlers {path}: implement your tools there (never overwritten)")
    if check and os.environ.get(NO_CHECK_ENV, "") in ("", "0"):
        check_handlers(spec, spec_path, path)
    return path

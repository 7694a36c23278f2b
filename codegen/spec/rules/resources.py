"""The ``resources:`` section of a spec: documents the device serves with MCP ``resources/read``.

::

    resources:
      status:
        description: The lamp's state as JSON.
        mime_type: application/json
        uri: lamp://status
        content: text
      log:
        description: One day of the lamp's log.
        mime_type: application/octet-stream
        uri_template: lamp://log/{day}
        params:
          day: {type: integer, min: 0, max: 6}
        content: binary
        max_size: 512

A resource has a fixed ``uri`` or a ``uri_template`` (RFC 6570 level 1: literal text and
``{var}`` expressions, each var one of ``params``, typed like tool parameters and all
required: they come from the URI). ``content`` is ``text`` or ``binary`` (the device sends
bytes base64-encoded). Errors go through the same checker as tools, with file:line and
hints.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional

import yaml

from mcpgen.codegen.spec.model import RESOURCE_CONTENTS, Param, Resource
from mcpgen.codegen.spec.names import python_path
from mcpgen.codegen.spec.resource_json import largest_content, read_reply_bytes, worst_case_page_bytes
from mcpgen.codegen.spec.rules.base import BAD
from mcpgen.codegen.spec.rules.events import event_name_problem
from mcpgen.codegen.spec.rules.tables import RESOURCE_KEYS, RESOURCE_REQUIRED

if TYPE_CHECKING:  # the checker imports this module
    from mcpgen.codegen.spec.rules.tools import ToolEntry
    from mcpgen.codegen.spec.rules.top import SpecChecker

NO_DEFAULT = "template variables have no default: every one is part of the URI"
# Characters of a URI (RFC 3986 unreserved, reserved and `%`); a scheme first.
URI_CHARS = r"A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%"
URI_RE = re.compile(rf"^[A-Za-z][A-Za-z0-9+.\-]*:[{URI_CHARS}]*$")
# A level 1 template: URI text with `{name}` expressions.
TEMPLATE_RE = re.compile(rf"^[A-Za-z][A-Za-z0-9+.\-]*:(?:[{URI_CHARS}]|\{{[A-Za-z_][A-Za-z0-9_]*\}})*$")
EXPRESSION_RE = re.compile(r"\{([^{}]*)\}")
# Operators of RFC 6570 levels 2-4 (`{+path}`, `{#frag}`, `{?q}` ...): not supported.
LEVEL2_OPERATORS = "+#./;?&=,!@|"
MAX_TEMPLATE_VARIABLES = 8  # == kMaxVariables in the core's resource_impl.h
MAX_SIZE_LIMIT = 1 << 24  # far above what a device buffer holds; catches a unit slip
MIN_RESPONSE_BUFFER = 256  # smaller cannot hold an initialize reply


def template_variables(template: str) -> list[str]:
    """The variable names of a level 1 template, in order."""
    return EXPRESSION_RE.findall(template)


def check_resources(checker: SpecChecker, node: yaml.Node, tools: list[ToolEntry]) -> tuple[Resource, ...]:
    """Validates the ``resources`` mapping; returns the resources that validated (declared order)."""
    if isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null") and node.style is None:
        return ()  # `resources:` with nothing after it
    m = checker.mapping(node, "resources", what="a mapping of resource name to resource")
    if m is None:
        return ()
    out: list[Resource] = []
    seen_uris: dict[str, str] = {}
    for name, (key_node, value_node) in m.items():
        r = _resource(checker, name, key_node, value_node)
        if r is None:
            continue
        uri = r.uri if r.uri is not None else r.uri_template
        assert uri is not None
        if uri in seen_uris:
            checker.error(
                key_node,
                f"resources.{name}",
                f"resource `{name}` has the same URI as `{seen_uris[uri]}`: {uri}",
                "give each resource its own URI",
            )
            continue
        seen_uris[uri] = name
        if checker.page_size is not None and worst_case_page_bytes(r) > checker.page_size:
            checker.error(
                key_node,
                f"resources.{name}",
                f"the list entry of resource `{name}` needs {worst_case_page_bytes(r)} bytes, more than "
                f"device.page_size ({checker.page_size})",
                "shorten its description or raise device.page_size",
            )
            continue
        out.append(r)
    _check_bindings_names(checker, m, tools)
    return tuple(out)


def _resource(checker: SpecChecker, name: str, key_node: yaml.Node, node: yaml.Node) -> Optional[Resource]:
    path = f"resources.{name}" if re.fullmatch(r"[A-Za-z0-9_\-]+", name) else f"resources[{name!r}]"
    n_errors = len(checker.errors)
    problem = event_name_problem(name)
    if problem:
        checker.error(
            key_node, path, f"resource name `{name}` {problem[0]}", problem[1].replace("event", "resource")
        )
    m = checker.mapping(
        node,
        path,
        allowed=RESOURCE_KEYS,
        required=RESOURCE_REQUIRED,
        what="a resource mapping",
        key_hint={
            "mimeType": "did you mean `mime_type`?",
            "mime": "did you mean `mime_type`?",
            "uriTemplate": "did you mean `uri_template`?",
            "template": "did you mean `uri_template`?",
            "size": "did you mean `max_size`? (an upper bound in bytes)",
            "name": f"the key above (`{name}`) is the resource's name; remove `name`",
            "returns": "write `content: text` or `content: binary`",
            "type": "write `content: text` or `content: binary`",
        },
        missing_hints={
            "description": "add `description: ...`: the assistant reads it to decide whether to read it",
            "mime_type": "add `mime_type: ...`, e.g. application/json, text/plain or image/png",
            "content": "add `content: text` or `content: binary` (bytes, sent base64-encoded)",
        },
    )
    if m is None:
        return None
    description: Any = ""
    if "description" in m:
        description = checker.string(m["description"][1], f"{path}.description")
    mime: Any = BAD
    if "mime_type" in m:
        mime = checker.string(m["mime_type"][1], f"{path}.mime_type")
        if mime is not BAD and not re.fullmatch(r"[A-Za-z0-9!#$&^_.+\-]+/[A-Za-z0-9!#$&^_.+\-]+(;.*)?", mime):
            checker.error(
                m["mime_type"][1],
                f"{path}.mime_type",
                f"`{mime}` is not a MIME type",
                "write it like text/plain",
            )
    content: Any = "text"
    if "content" in m:
        content = checker.choice(m["content"][1], f"{path}.content", RESOURCE_CONTENTS, "a content kind")
    uri: Optional[str] = None
    template: Optional[str] = None
    if "uri" in m and "uri_template" in m:
        checker.error(
            m["uri_template"][0],
            f"{path}.uri_template",
            "a resource has either `uri` or `uri_template`, not both",
            "keep `uri` for one fixed document, `uri_template` when the URI has {variables}",
        )
    elif "uri" in m:
        uri = _uri(checker, m["uri"][1], f"{path}.uri")
    elif "uri_template" in m:
        template = _template(checker, m["uri_template"][1], f"{path}.uri_template")
    else:
        checker.error(node, path, "missing `uri` or `uri_template`", "add `uri: scheme://...`")
    params: tuple[Param, ...] = ()
    if "params" in m:
        if "uri" in m:
            checker.error(
                m["params"][0],
                f"{path}.params",
                "`params` are the variables of a `uri_template`; this resource has a fixed `uri`",
                "remove `params`, or write the URI as `uri_template` with {variables}",
            )
        else:
            before = len(checker.errors)
            params = checker.params(m["params"][1], f"{path}.params", no_default=NO_DEFAULT)
            if len(checker.errors) != before:
                template = None  # a broken parameter is reported already: no "missing variable" too
    if template is not None:
        _match_variables(checker, m, path, template, params)
    max_size: Optional[int] = None
    if "max_size" in m:
        v = checker.integer(m["max_size"][1], f"{path}.max_size", "an integer number of bytes")
        if v is not BAD and not 1 <= v <= MAX_SIZE_LIMIT:
            checker.error(
                m["max_size"][1],
                f"{path}.max_size",
                f"expected 1 to {MAX_SIZE_LIMIT} bytes, got {v}",
                "the bound is in bytes of content, before base64",
            )
        elif v is not BAD:
            max_size = v
            _check_reply_fits(checker, m["max_size"][1], path, content, mime, uri, template, v)
    subscribe: Any = False
    if "subscribe" in m:
        subscribe = checker.boolean(m["subscribe"][1], f"{path}.subscribe")
    if len(checker.errors) != n_errors or BAD in (description, mime, content, subscribe):
        return None
    if uri is None and template is None:
        return None
    return Resource(
        name=name,
        description=description,
        mime_type=mime,
        content=content,
        uri=uri,
        uri_template=template,
        params=params,
        max_size=max_size,
        subscribe=subscribe,
        pos=checker.pos(key_node),
    )


def _check_reply_fits(
    checker: SpecChecker,
    node: yaml.Node,
    path: str,
    content: Any,
    mime: Any,
    uri: Optional[str],
    template: Optional[str],
    max_size: int,
) -> None:
    """A read of ``max_size`` bytes must fit the device's reply buffer: the core writes the
    whole reply there (content base64-encoded or JSON-escaped) and answers -32603
    "response buffer too small" when it does not fit, so such a max_size allows what the
    device can never send."""
    buffer = checker.response_buffer
    if buffer is None or content not in RESOURCE_CONTENTS or not isinstance(mime, str):
        return
    if uri is None and template is None:
        return
    needed = read_reply_bytes(content, mime, uri, template, max_size)
    if needed <= buffer:
        return
    fits = largest_content(content, mime, uri, template, buffer)
    kind = "base64-encoded" if content == "binary" else "as text (more when it needs escaping)"
    lower = f"lower max_size to at most {fits}, or " if fits > 0 else ""
    checker.error(
        node,
        f"{path}.max_size",
        f"a read of {max_size} bytes of content, {kind}, needs a reply of {needed} bytes (in the "
        f"xiaozhi envelope), more than the device's reply buffer of {buffer} bytes "
        "(device.response_buffer, the firmware's MCPGEN_RESPONSE_BUFFER_SIZE): the device would "
        "answer every such read with -32603",
        f"{lower}build the firmware with -DMCPGEN_RESPONSE_BUFFER_SIZE={needed} (or more) and set "
        f"device.response_buffer: {needed}",
    )


def _uri(checker: SpecChecker, node: yaml.Node, path: str) -> Optional[str]:
    uri = checker.string(node, path)
    if uri is BAD:
        return None
    if "{" in uri or "}" in uri:
        checker.error(
            node, path, f"`{uri}` has {{...}}", "a URI with variables is written as `uri_template:`"
        )
        return None
    if not URI_RE.match(uri):
        checker.error(node, path, f"`{uri}` is not a URI", _uri_hint(uri))
        return None
    return str(uri)


def _uri_hint(text: str) -> str:
    if not re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:", text):
        return "start it with a scheme, like lamp://status"
    bad = sorted({c for c in text if not re.match(rf"[{URI_CHARS}{{}}]", c)})
    return "percent-encode " + " ".join(repr(c) for c in bad) if bad else "write it like lamp://status"


def _template(checker: SpecChecker, node: yaml.Node, path: str) -> Optional[str]:
    template = checker.string(node, path)
    if template is BAD:
        return None
    for expr in EXPRESSION_RE.findall(template):
        if expr[:1] in LEVEL2_OPERATORS and expr:
            checker.error(
                node,
                path,
                f"`{{{expr}}}` is an RFC 6570 level {2 if expr[0] in '+#' else 3} expression",
                f"only level 1 is supported: write `{{{expr[1:]}}}`",
            )
            return None
        if "," in expr:
            checker.error(
                node, path, f"`{{{expr}}}` has several variables", "write one `{var}` per expression"
            )
            return None
    if not TEMPLATE_RE.match(template):
        checker.error(node, path, f"`{template}` is not a level 1 URI template", _uri_hint(template))
        return None
    if "}{" in template:
        checker.error(
            node,
            path,
            f"`{template}` has two variables side by side",
            "put literal text between them (e.g. `{a}-{b}`) so the device can tell them apart",
        )
        return None
    if len(template_variables(template)) > MAX_TEMPLATE_VARIABLES:
        checker.error(
            node,
            path,
            f"`{template}` has {len(template_variables(template))} variables",
            f"the device matches at most {MAX_TEMPLATE_VARIABLES}; split the resource",
        )
        return None
    if not template_variables(template):
        checker.error(node, path, f"`{template}` has no {{variable}}", "a URI without variables is `uri:`")
        return None
    return str(template)


def _match_variables(
    checker: SpecChecker,
    m: dict[str, tuple[yaml.Node, yaml.Node]],
    path: str,
    template: str,
    params: tuple[Param, ...],
) -> None:
    names = template_variables(template)
    tnode = m["uri_template"][1]
    seen: set[str] = set()
    for v in names:
        if v in seen:
            checker.error(
                tnode, f"{path}.uri_template", f"variable `{v}` appears twice", "use each variable once"
            )
        seen.add(v)
    declared = {p.name for p in params}
    for v in names:
        if v not in declared and "params" in m:
            checker.error(
                m["params"][1],
                f"{path}.params",
                f"template variable `{v}` has no parameter",
                f"add `{v}: {{type: ...}}`",
            )
        elif v not in declared:
            checker.error(
                tnode,
                f"{path}.uri_template",
                f"template variable `{v}` has no parameter",
                f"add `params:` with `{v}: {{type: string}}` (or integer, number, boolean)",
            )
    for p in params:
        if p.name not in seen:
            checker.error(
                m["params"][1],
                f"{path}.params.{p.name}",
                f"parameter `{p.name}` is not a variable of `{template}`",
                f"add `{{{p.name}}}` to the template or remove the parameter",
            )


def _check_bindings_names(
    checker: SpecChecker, resources: dict[str, tuple[yaml.Node, yaml.Node]], tools: list[ToolEntry]
) -> None:
    """The Python bindings put resources under ``device.resources``: no tool may take that name."""
    for info in tools:
        if info.name is not None and python_path(info.name)[:1] == ("resources",) and resources:
            first_key = next(iter(resources.values()))[0]
            checker.error(
                first_key,
                "resources",
                f"the Python bindings put resources under `device.resources`, but tools[{info.index}] "
                f"`{info.name}` uses that name",
                "rename the tool",
            )
            return

"""The ``prompts:`` section of a spec: prompts the bridge serves (MCP ``prompts/list``,
``prompts/get``, and ``completion/complete`` of their arguments).

::

    prompts:
      evening_light:
        title: Evening light
        description: Set the lamp up for a calm evening.
        arguments:
          brightness: {type: integer, min: 0, max: 100, default: 30}
          mood: {type: string, enum: [warm, candle]}
        messages:
          - role: user
            text: >-
              Make the lamp {{mood}} at {{brightness}} % with {{tool:self.light.set_rgb}};
              its state is {{resource:lamp://status}}.
          - role: user
            image: {file: lamp.png, mime_type: image/png}

Arguments are typed like tool parameters (a ``default`` makes one optional). A message has
a ``role`` (``user`` or ``assistant``) and one content: ``text``, ``image`` (``data``
base64 or a ``file`` beside the spec, and a ``mime_type``) or ``resource`` (an embedded
resource: ``uri``, ``mime_type``, ``text``). In ``text`` and a resource's ``uri``,
``{{name}}`` is an argument's value, ``{{tool:NAME}}`` a tool's name and
``{{resource:URI}}`` a resource's URI, each as the bridge serves it; every one must exist
in the spec. Prompts are the bridge's: the device never sees them (docs/bridge.md says why).
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import yaml

from mcpgen.codegen.spec.model import PROMPT_ROLES, Param, Prompt, PromptContent, PromptMessage, Resource
from mcpgen.codegen.spec.rules.base import BAD
from mcpgen.codegen.spec.rules.events import event_name_problem
from mcpgen.codegen.spec.rules.tables import (
    PROMPT_IMAGE_KEYS,
    PROMPT_KEYS,
    PROMPT_MESSAGE_KEYS,
    PROMPT_REQUIRED,
    PROMPT_RESOURCE_KEYS,
)
from mcpgen.codegen.spec.spec_errors import did_you_mean

if TYPE_CHECKING:  # the checker imports this module
    from mcpgen.codegen.spec.rules.tools import ToolEntry
    from mcpgen.codegen.spec.rules.top import SpecChecker

PLACEHOLDER_RE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
"""``{{argument}}``, ``{{tool:NAME}}``, ``{{resource:URI}}`` in a message's text or URI."""
CONTENT_KINDS = ("text", "image", "resource")
MAX_IMAGE_BYTES = 1 << 20
"""An image a prompt carries (every ``prompts/get`` sends it whole, base64-encoded)."""
MIME_RE = re.compile(r"[A-Za-z0-9!#$&^_.+\-]+/[A-Za-z0-9!#$&^_.+\-]+(;.*)?")


def placeholders(text: str) -> list[str]:
    """The ``{{...}}`` placeholders of ``text``, stripped, in order."""
    return PLACEHOLDER_RE.findall(text)


def check_prompts(
    checker: SpecChecker, node: yaml.Node, tools: list[ToolEntry], resources: tuple[Resource, ...]
) -> tuple[Prompt, ...]:
    """Validates the ``prompts`` mapping; returns the prompts that validated (declared order)."""
    if isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null") and node.style is None:
        return ()  # `prompts:` with nothing after it
    m = checker.mapping(node, "prompts", what="a mapping of prompt name to prompt")
    if m is None:
        return ()
    names = _Names(
        tools=[t.name for t in tools if t.name],
        resources=[r.uri or r.uri_template or "" for r in resources],
    )
    out = []
    for name, (key_node, value_node) in m.items():
        p = _prompt(checker, name, key_node, value_node, names)
        if p is not None:
            out.append(p)
    return tuple(out)


class _Names:
    """What a placeholder may name: the spec's tools and resources."""

    def __init__(self, tools: list[str], resources: list[str]) -> None:
        self.tools = tools
        self.resources = resources


def _prompt(
    checker: SpecChecker, name: str, key_node: yaml.Node, node: yaml.Node, names: _Names
) -> Optional[Prompt]:
    path = f"prompts.{name}" if re.fullmatch(r"[A-Za-z0-9_\-]+", name) else f"prompts[{name!r}]"
    n_errors = len(checker.errors)
    problem = event_name_problem(name)
    if problem:
        checker.error(
            key_node, path, f"prompt name `{name}` {problem[0]}", problem[1].replace("event", "prompt")
        )
    m = checker.mapping(
        node,
        path,
        allowed=PROMPT_KEYS,
        required=PROMPT_REQUIRED,
        what="a prompt mapping",
        key_hint={
            "params": "a prompt's inputs are `arguments`",
            "name": f"the key above (`{name}`) is the prompt's name; remove `name`",
            "text": "put the text in a message: `messages: [{role: user, text: ...}]`",
            "template": "write the text in `messages: [{role: user, text: ...}]`",
        },
        missing_hints={
            "description": "add `description: ...`: a client shows it when the user picks a prompt",
            "messages": "add `messages:` with a list like `- {role: user, text: ...}`",
        },
    )
    if m is None:
        return None
    description: Any = ""
    if "description" in m:
        description = checker.string(m["description"][1], f"{path}.description")
    title: Any = None
    if "title" in m:
        title = checker.string(m["title"][1], f"{path}.title")
    arguments: tuple[Param, ...] = ()
    if "arguments" in m:
        arguments = checker.params(m["arguments"][1], f"{path}.arguments")
    messages: list[PromptMessage] = []
    used: set[str] = set()
    if "messages" in m:
        items = checker.sequence(m["messages"][1], f"{path}.messages", "a list of messages")
        if items is not None and not items:
            checker.error(
                m["messages"][1],
                f"{path}.messages",
                "expected at least one message",
                "add `- {role: user, text: ...}`",
            )
        for i, item in enumerate(items or []):
            msg = _message(checker, item, f"{path}.messages[{i}]", arguments, names, used)
            if msg is not None:
                messages.append(msg)
    if len(checker.errors) == n_errors:
        for a in arguments:
            if a.name not in used:
                checker.error(
                    m["arguments"][1],
                    f"{path}.arguments.{a.name}",
                    f"argument `{a.name}` is not used by any message",
                    f"write {{{{{a.name}}}}} in a message's text, or remove the argument",
                )
    if len(checker.errors) != n_errors or BAD in (description, title):
        return None
    return Prompt(
        name=name,
        description=description,
        arguments=arguments,
        messages=tuple(messages),
        title=title,
        pos=checker.pos(key_node),
    )


def _message(
    checker: SpecChecker,
    node: yaml.Node,
    path: str,
    arguments: tuple[Param, ...],
    names: _Names,
    used: set[str],
) -> Optional[PromptMessage]:
    m = checker.mapping(
        node,
        path,
        allowed=PROMPT_MESSAGE_KEYS,
        required=("role",),
        what="a message mapping like `{role: user, text: ...}`",
        key_hint={"content": "write the content as `text: ...`, `image: {...}` or `resource: {...}`"},
        missing_hints={"role": "add `role: user` (or `assistant`)"},
    )
    if m is None:
        return None
    role = checker.choice(m["role"][1], f"{path}.role", PROMPT_ROLES, "a role") if "role" in m else BAD
    kinds = [k for k in CONTENT_KINDS if k in m]
    if len(kinds) != 1:
        checker.error(
            node,
            path,
            "a message has one content: `text`, `image` or `resource`"
            + (f", this one has {len(kinds)}" if kinds else ""),
            "split it into one message per content" if kinds else "add `text: ...`",
        )
        return None
    kind = kinds[0]
    content: Optional[PromptContent] = None
    cnode = m[kind][1]
    if kind == "text":
        text = checker.string(cnode, f"{path}.text")
        if text is not BAD and _check_placeholders(
            checker, cnode, f"{path}.text", text, arguments, names, used
        ):
            content = PromptContent(kind="text", text=text)
    elif kind == "image":
        content = _image(checker, cnode, f"{path}.image")
    else:
        content = _resource(checker, cnode, f"{path}.resource", arguments, names, used)
    if role is BAD or content is None:
        return None
    return PromptMessage(role=role, content=content)


def _image(checker: SpecChecker, node: yaml.Node, path: str) -> Optional[PromptContent]:
    m = checker.mapping(
        node,
        path,
        allowed=PROMPT_IMAGE_KEYS,
        required=("mime_type",),
        what="an image mapping like `{file: lamp.png, mime_type: image/png}`",
        key_hint={"mimeType": "did you mean `mime_type`?", "path": "did you mean `file`?"},
        missing_hints={"mime_type": "add `mime_type: image/png` (or the image's type)"},
    )
    if m is None:
        return None
    mime = _mime(checker, m, path, "image/")
    if ("data" in m) == ("file" in m):
        checker.error(
            node,
            path,
            "an image has `data` (base64) or `file` (a path beside the spec), one of them",
            "write `file: NAME.png` for an image file",
        )
        return None
    raw: Optional[bytes] = None
    if "file" in m:
        fnode = m["file"][1]
        name = checker.string(fnode, f"{path}.file")
        if name is BAD:
            return None
        file = Path(name) if Path(name).is_absolute() else Path(checker.file).parent / name
        try:
            size = file.stat().st_size
            raw = file.read_bytes() if size <= MAX_IMAGE_BYTES else None
        except OSError as exc:
            checker.error(
                fnode,
                f"{path}.file",
                f"cannot read `{name}`: {exc.strerror or exc}",
                "the path is relative to the spec's folder",
            )
            return None
        if raw is None:
            checker.error(
                fnode,
                f"{path}.file",
                f"`{name}` has {size} bytes, more than {MAX_IMAGE_BYTES}",
                "a prompt sends its image whole on every prompts/get: shrink it",
            )
            return None
        data = base64.b64encode(raw).decode("ascii")
    else:
        dnode = m["data"][1]
        data = checker.string(dnode, f"{path}.data")
        if data is BAD:
            return None
        data = "".join(data.split())
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            checker.error(
                dnode,
                f"{path}.data",
                "`data` is not base64",
                "encode the image with `base64 -w0 FILE`, or name the file with `file:`",
            )
            return None
        if len(raw) > MAX_IMAGE_BYTES:
            checker.error(
                dnode,
                f"{path}.data",
                f"the image has {len(raw)} bytes, more than {MAX_IMAGE_BYTES}",
                "a prompt sends its image whole on every prompts/get: shrink it",
            )
            return None
    if mime is BAD:
        return None
    return PromptContent(kind="image", data=data, mime_type=mime)


def _resource(
    checker: SpecChecker,
    node: yaml.Node,
    path: str,
    arguments: tuple[Param, ...],
    names: _Names,
    used: set[str],
) -> Optional[PromptContent]:
    m = checker.mapping(
        node,
        path,
        allowed=PROMPT_RESOURCE_KEYS,
        required=PROMPT_RESOURCE_KEYS,
        what="an embedded resource mapping like `{uri: ..., mime_type: text/plain, text: ...}`",
        key_hint={"mimeType": "did you mean `mime_type`?"},
    )
    if m is None:
        return None
    mime = _mime(checker, m, path, "")
    uri: Any = BAD
    if "uri" in m:
        uri = checker.string(m["uri"][1], f"{path}.uri")
        if uri is not BAD and not _check_placeholders(
            checker, m["uri"][1], f"{path}.uri", uri, arguments, names, used
        ):
            uri = BAD
    text: Any = BAD
    if "text" in m:
        text = checker.string(m["text"][1], f"{path}.text", nonempty=False)
    if BAD in (mime, uri, text):
        return None
    return PromptContent(kind="resource", uri=uri, mime_type=mime, text=text)


def _mime(checker: SpecChecker, m: dict[str, tuple[yaml.Node, yaml.Node]], path: str, family: str) -> Any:
    if "mime_type" not in m:
        return BAD
    mnode = m["mime_type"][1]
    mime = checker.string(mnode, f"{path}.mime_type")
    if mime is BAD:
        return BAD
    if not MIME_RE.fullmatch(mime) or not mime.startswith(family):
        checker.error(
            mnode,
            f"{path}.mime_type",
            f"`{mime}` is not {'an image' if family else 'a'} MIME type",
            f"write it like {'image/png' if family else 'text/plain'}",
        )
        return BAD
    return mime


def _check_placeholders(
    checker: SpecChecker,
    node: yaml.Node,
    path: str,
    text: str,
    arguments: tuple[Param, ...],
    names: _Names,
    used: set[str],
) -> bool:
    """Every ``{{...}}`` of ``text`` names an argument, a tool or a resource of the spec."""
    ok = True
    declared = [a.name for a in arguments]
    for ref in placeholders(text):
        kind, sep, target = ref.partition(":")
        if sep and kind == "tool":
            if target not in names.tools:
                ok = False
                checker.error(
                    node,
                    path,
                    f"`{{{{{ref}}}}}` names no tool of this spec",
                    did_you_mean(target, names.tools) or "tools: " + ", ".join(names.tools),
                )
        elif sep and kind == "resource":
            if target not in names.resources:
                ok = False
                checker.error(
                    node,
                    path,
                    f"`{{{{{ref}}}}}` names no resource of this spec",
                    did_you_mean(target, names.resources)
                    or (
                        "resources: " + ", ".join(names.resources)
                        if names.resources
                        else "declare it under `resources:`, with this URI"
                    ),
                )
        elif ref in declared:
            used.add(ref)
        else:
            ok = False
            hint = did_you_mean(ref, declared) or (
                f"declare it under `arguments:`, e.g. `{ref}: {{type: string}}`"
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ref)
                else "write {{argument}}, {{tool:NAME}} or {{resource:URI}}"
            )
            checker.error(node, path, f"`{{{{{ref}}}}}` is not an argument of this prompt", hint)
    return ok

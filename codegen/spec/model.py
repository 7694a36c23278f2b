"""The normalized, immutable spec model that every emitter reads.

The loader (``codegen.spec.loader``) builds it from YAML after validation; emitters never see
raw YAML. Source positions ride along for error messages but are excluded from the
fingerprint, so reformatting a spec never changes it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union

from mcpgen.codegen.spec.names import python_path
from mcpgen.protocol import DEFAULT_PROTOCOL_VERSION, EVENT_METHOD_PREFIX

ErrorStyle = Literal["mcp", "jsonrpc"]
ERROR_STYLES: tuple[str, ...] = ("mcp", "jsonrpc")
# "object": a named object shape of the spec's `types:` (Param.ref names it).
ParamType = Literal["boolean", "integer", "number", "string", "object"]
# The same kinds as mcpgen.protocol.RETURN_KINDS (a Literal must spell them; a test compares).
ReturnKind = Literal[
    "boolean", "integer", "number", "string", "object", "image", "audio", "resource", "content", "none"
]
# One item of a `content` return (mcpgen.protocol.CONTENT_ITEM_KINDS).
ContentItemKind = Literal["text", "image", "audio", "resource"]
FieldType = Literal["boolean", "integer", "number", "string", "object", "array"]
Scalar = Union[bool, int, float, str]

PARAM_TYPES: tuple[str, ...] = ("boolean", "integer", "number", "string")
FIELD_TYPES: tuple[str, ...] = ("boolean", "integer", "number", "string", "object", "array")

DEFAULT_PAGE_SIZE = 8000
#: The device's reply buffer when the build does not set it: MCPGEN_RESPONSE_BUFFER_SIZE in
#: firmware_template/core/mcpgen/mcp_core.h (tests/spec/test_protocol_constants.py compares).
DEFAULT_RESPONSE_BUFFER = 10240
FINGERPRINT_HEX_CHARS = 16


@dataclass(frozen=True)
class SourcePos:
    """Where a node came from: 1-based line and column in ``file``."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Param:
    """One tool argument (or a field of a named object type). ``default is None`` means
    the argument is required. ``type == "object"``: ``ref`` names the spec's ``types:``
    entry whose shape the value has (never with a default: always required)."""

    name: str
    type: ParamType
    description: str = ""
    default: Optional[Scalar] = None
    minimum: Optional[Union[int, float]] = None
    maximum: Optional[Union[int, float]] = None
    max_length: Optional[int] = None
    enum: tuple[str, ...] = ()
    pattern: Optional[str] = None
    # Asked of the person, never of the model (spec `from_human`): the question to show
    # ("" when the spec says `true`); None for an ordinary argument. See HUMAN_FIELDS.
    human: Optional[str] = None
    pos: Optional[SourcePos] = field(default=None, compare=False, repr=False)
    ref: Optional[str] = None  # type == "object": the name of its ObjectType

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class ObjectType:
    """A named object shape (the spec's ``types:``), written once and used as the type of
    tool parameters and of other types' fields: ``$defs/<name>`` in the published schema,
    a C++ struct on the device. ``fields`` are typed like parameters, sorted by name."""

    name: str
    description: str
    fields: tuple[Param, ...]
    pos: Optional[SourcePos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Field:
    """A property of an ``object`` return value (nested objects and arrays allowed)."""

    name: str
    type: FieldType
    description: str = ""
    properties: tuple[Field, ...] = ()  # when type == "object"
    items: Optional[Field] = None  # when type == "array"; its name is ""


@dataclass(frozen=True)
class Returns:
    kind: ReturnKind
    description: str = ""
    properties: tuple[Field, ...] = ()  # when kind == "object"
    # When kind == "content": the kinds of its items, in order (`returns: [text, image]`).
    # Left out of the canonical form when empty, so older specs keep their fingerprints.
    items: tuple[ContentItemKind, ...] = field(default=(), metadata={"omit_empty": True})


@dataclass(frozen=True)
class Tool:
    name: str  # MCP tool name, e.g. "self.audio_speaker.set_volume"
    description: str
    handler: str  # C++ handler function name (in namespace ``tools``)
    params: tuple[Param, ...]  # sorted by name
    returns: Returns
    title: Optional[str] = None
    user_only: bool = False
    read_only: Optional[bool] = None
    destructive: Optional[bool] = None
    idempotent: Optional[bool] = None
    # The handler reports progress (Context::progress): the tools/list entry says so in
    # _meta, the bindings take on_progress. Left out of canonical() when false.
    progress: bool = False
    # A text the person must accept before each call (spec `confirm`); None: no confirmation.
    confirm: Optional[str] = None
    pos: Optional[SourcePos] = field(default=None, compare=False, repr=False)

    @property
    def path(self) -> tuple[str, ...]:
        """Python attribute path of the tool's binding: ``self.a.b`` -> ("a", "b")."""
        return python_path(self.name)

    @property
    def human_params(self) -> tuple[Param, ...]:
        """The parameters asked of the person (sorted by name, as ``params``)."""
        return tuple(p for p in self.params if p.human is not None)

    @property
    def asks_human(self) -> bool:
        """Does a call need the person (a value or a confirmation) before it reaches the device?"""
        return self.confirm is not None or any(p.human is not None for p in self.params)


@dataclass(frozen=True)
class Event:
    """A device-initiated event: sent as the JSON-RPC notification
    ``notifications/events/<name>`` whose ``params`` are its typed arguments (all required)."""

    name: str  # an identifier: emit_<name> in C++, events.<name>() in Python
    description: str
    params: tuple[Param, ...]  # sorted by name; never with a default
    pos: Optional[SourcePos] = field(default=None, compare=False, repr=False)

    @property
    def method(self) -> str:
        return EVENT_METHOD_PREFIX + self.name


ResourceContent = Literal["text", "binary"]
RESOURCE_CONTENTS: tuple[str, ...] = ("text", "binary")


@dataclass(frozen=True)
class Resource:
    """A device resource (the spec's ``resources:``): read with MCP ``resources/read``.

    Exactly one of ``uri`` (a fixed URI) and ``uri_template`` (RFC 6570 level 1) is set;
    each ``{var}`` of the template is one of ``params`` (typed like tool parameters, all
    required). ``content`` says whether the handler writes text or bytes (sent base64).
    """

    name: str  # an identifier: resources::read_<name> in C++, resources.<name> in Python
    description: str
    mime_type: str
    content: ResourceContent
    uri: Optional[str] = None
    uri_template: Optional[str] = None
    params: tuple[Param, ...] = ()  # the template's variables, sorted by name
    max_size: Optional[int] = None  # bytes of content (before base64)
    subscribe: bool = False
    pos: Optional[SourcePos] = field(default=None, compare=False, repr=False)

    @property
    def handler(self) -> str:
        """The C++ handler in namespace ``resources``."""
        return f"read_{self.name}"


PromptRole = Literal["user", "assistant"]
PROMPT_ROLES: tuple[str, ...] = ("user", "assistant")


@dataclass(frozen=True)
class PromptContent:
    """One message's content (the spec's ``prompts:``, ``codegen.spec.rules.prompts``):
    ``kind`` "text" (``text``), "image" (``data``: base64, ``mime_type``) or "resource"
    (an embedded resource: ``uri``, ``mime_type`` and ``text``). ``text`` and ``uri`` may hold
    ``{{argument}}``, ``{{tool:NAME}}`` and ``{{resource:URI}}``, filled when a client gets it."""

    kind: Literal["text", "image", "resource"]
    text: str = ""
    data: str = ""
    mime_type: str = ""
    uri: str = ""


@dataclass(frozen=True)
class PromptMessage:
    role: PromptRole
    content: PromptContent


@dataclass(frozen=True)
class Prompt:
    """A prompt the bridge serves with ``prompts/list`` and ``prompts/get``: typed arguments
    (a default makes one optional), and messages whose text may name the device's tools
    and resources. Served by the bridge, not the device: outside the fingerprint."""

    name: str
    description: str
    arguments: tuple[Param, ...]  # sorted by name
    messages: tuple[PromptMessage, ...]
    title: Optional[str] = None
    pos: Optional[SourcePos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class DeviceSpec:
    """The spec's `device:` section: what the device says about itself as an MCP server."""

    name: str  # MCP serverInfo.name
    version: str
    description: str = ""
    page_size: int = DEFAULT_PAGE_SIZE
    protocol_version: str = DEFAULT_PROTOCOL_VERSION
    # How the device reports arguments that break the spec: "mcp" (a tool result with
    # isError: true, MCP-correct) or "jsonrpc" (error -32602, for stock xiaozhi backends).
    errors: ErrorStyle = "mcp"
    # Over-the-air updates: adds the built-in tool self.upgrade_firmware (codegen.spec.ota).
    ota: bool = False
    # The reply buffer the firmware is built with (MCPGEN_RESPONSE_BUFFER_SIZE): the spec
    # check refuses a resource whose max_size cannot fit in it. A build setting, not part
    # of what the device offers, so never in the fingerprint.
    response_buffer: int = DEFAULT_RESPONSE_BUFFER


@dataclass(frozen=True)
class OtaSigning:
    """``device.ota.public_key`` (and ``secure_version``): the device installs only images
    signed with the matching private key (ESP-IDF's ECDSA signed-app block, docs/ota.md).
    A build setting, not part of the tool surface: outside the fingerprint."""

    public_key: bytes = field(repr=False)  # the P-256 point, X then Y, 32 big-endian bytes each
    key_path: str = ""  # as written in the spec
    secure_version: int = 0  # ESP-IDF's anti-rollback counter (CONFIG_BOOTLOADER_APP_SECURE_VERSION)


@dataclass(frozen=True)
class FirmwareSetting:
    """One entry of the spec's ``firmware:`` section (Wi-Fi, backend, MQTT settings of the
    ESP32 build). Not part of the tool surface: never in the fingerprint or generated
    sources; the ESP32 targets put it in ``sdkconfig.defaults``. ``secret`` is the name of
    the ``!secret`` it came from (None when written in the spec); the value is kept out of
    ``repr`` so a logged model cannot show a password."""

    key: str  # e.g. "wifi_password"
    env: str  # the MCPGEN_* environment variable it stands for, e.g. "MCPGEN_WIFI_PASSWORD"
    value: str = field(repr=False)
    secret: Optional[str] = None
    pos: Optional[SourcePos] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Spec:
    device: DeviceSpec
    tools: tuple[Tool, ...]  # in declared order: the order of tools/list
    source: str = field(default="", compare=False)  # path as given to the loader
    events: tuple[Event, ...] = ()  # in declared order (codegen.spec.rules.events)
    resources: tuple[Resource, ...] = ()  # in declared order (codegen.spec.rules.resources)
    # `firmware:` settings; outside canonical() (so the fingerprint) and compare.
    firmware: tuple[FirmwareSetting, ...] = field(default=(), compare=False, repr=False)
    # `device.ota.public_key`: signed OTA images only; outside canonical() like `firmware`.
    ota_signing: Optional[OtaSigning] = field(default=None, compare=False, repr=False)
    # `prompts:`: served by the bridge, never by the device, so outside canonical() and
    # compare like `firmware` (editing a prompt needs no new firmware, keeps the fingerprint,
    # and a release's recorded model, which has no prompts, still equals the spec).
    prompts: tuple[Prompt, ...] = field(default=(), compare=False)
    types: tuple[ObjectType, ...] = ()  # `types:` in declared order (codegen.spec.rules.types)

    def canonical(self) -> dict[str, Any]:
        """The normalized model as plain JSON data; the fingerprint hashes this.

        ``events`` appears only when the spec declares some, so the fingerprints of specs
        without events did not change when events were added to the format.
        """
        device = _plain(self.device)
        if device["errors"] == "mcp":  # the default: absent, so older fingerprints hold
            del device["errors"]
        if not device["ota"]:  # likewise: specs without OTA keep their fingerprints
            del device["ota"]
        del device["response_buffer"]  # a build setting (checked, not offered)
        out = {"device": device, "tools": [_tool_plain(t) for t in self.tools]}
        if self.events:
            out["events"] = [_plain(e) for e in self.events]
        if self.resources:  # likewise: specs without resources keep their fingerprint
            out["resources"] = [_plain(r) for r in self.resources]
        if self.types:  # likewise: specs without named types keep their fingerprint
            out["types"] = [_plain(t) for t in self.types]
        return out

    def canonical_json(self) -> str:
        return json.dumps(self.canonical(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @property
    def fingerprint(self) -> str:
        digest = hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()
        return digest[:FINGERPRINT_HEX_CHARS]

    def tool(self, name: str) -> Tool:
        for t in self.tools:
            if t.name == name:
                return t
        raise KeyError(name)

    def object_type(self, name: str) -> ObjectType:
        for t in self.types:
            if t.name == name:
                return t
        raise KeyError(name)


def _tool_plain(tool: Tool) -> dict[str, Any]:
    """A tool as canonical JSON: `progress` only when set, so the fingerprints of specs
    without it did not change when it was added to the format."""
    out: dict[str, Any] = _plain(tool)
    if not out["progress"]:
        del out["progress"]
    return out


# Fields added to the format after specs were released: absent from canonical() while
# unset, so the fingerprint of a spec that does not use them did not change.
HUMAN_FIELDS: frozenset[str] = frozenset({"human", "confirm"})


def _plain(obj: Any) -> Any:
    """Dataclass -> dict without source positions (they must not affect the fingerprint)."""
    if isinstance(obj, tuple):
        return [_plain(x) for x in obj]
    if hasattr(obj, "__dataclass_fields__"):
        out: dict[str, Any] = {}
        for name, f in obj.__dataclass_fields__.items():
            if name in ("pos", "source"):
                continue
            value = getattr(obj, name)
            if name == "ref" and value is None:  # a scalar parameter: fingerprints as before
                continue
            if name in HUMAN_FIELDS and value is None:
                continue
            if f.metadata.get("omit_empty") and not value:
                continue
            out[name] = _plain(value)
        return out
    return obj

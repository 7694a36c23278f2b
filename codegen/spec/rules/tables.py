"""The rule tables of the spec format: which keys each mapping takes, the accepted values,
the spellings people type by habit and the hints for what is missing.

The checker (the other modules of ``rules``) and the editor schema (``rules.schema``) both
read these tables, so the two cannot disagree about what a spec may contain.
"""

from __future__ import annotations

from mcpgen.codegen.spec.model import FIELD_TYPES
from mcpgen.protocol import RETURN_KINDS, SESSION_PROTOCOL_VERSIONS

# A device speaks the revisions that open with `initialize` (the core has no stateless mode).
PROTOCOL_VERSIONS: tuple[str, ...] = SESSION_PROTOCOL_VERSIONS
# `returns: KIND`; an object needs its properties, so it is written as a mapping.
# `content` is written as a list of item kinds (`returns: [text, image]`).
SIMPLE_RETURN_KINDS: tuple[str, ...] = tuple(k for k in RETURN_KINDS if k not in ("object", "content"))
#: Most items one `returns:` list may declare (the device core's MCPGEN_CONTENT_ITEMS
#: default is 4; a longer list needs a build that raises it, which the generated
#: tables check at compile time).
MAX_CONTENT_ITEMS = 8
MAX_FIELD_DEPTH = 32  # also stops recursive aliases (`&a {x: *a}`)
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

TOP_KEYS = ("device", "types", "tools", "events", "resources", "firmware", "prompts")
TOP_REQUIRED = ("device", "tools")
DEVICE_KEYS = (
    "name",
    "version",
    "description",
    "page_size",
    "protocol_version",
    "errors",
    "ota",
    "response_buffer",
)
DEVICE_REQUIRED = ("name", "version")
# `firmware:` key -> the MCPGEN_* environment variable of the ESP32 build it sets (docs/firmware.md).
# Any of them may be `!secret NAME` (codegen.spec.secrets).
FIRMWARE_KEYS: dict[str, str] = {
    "wifi_ssid": "MCPGEN_WIFI_SSID",
    "wifi_password": "MCPGEN_WIFI_PASSWORD",
    "backend_url": "MCPGEN_BACKEND_URL",
    "backend_token": "MCPGEN_BACKEND_TOKEN",
    "transport": "MCPGEN_TRANSPORT",
    "mqtt_username": "MCPGEN_MQTT_USERNAME",
    "mqtt_password": "MCPGEN_MQTT_PASSWORD",
    "mqtt_topic_prefix": "MCPGEN_MQTT_TOPIC_PREFIX",
    "mqtt_device_id": "MCPGEN_MQTT_DEVICE_ID",
}
TOOL_KEYS = (
    "name",
    "description",
    "title",
    "user_only",
    "read_only",
    "destructive",
    "idempotent",
    "progress",
    "confirm",
    "params",
    "returns",
    "handler",
)
TOOL_REQUIRED = ("name", "description")
# One entry of `resources:` (codegen.spec.rules.resources); `uri` or `uri_template`, not both.
RESOURCE_KEYS = (
    "description",
    "mime_type",
    "uri",
    "uri_template",
    "params",
    "content",
    "max_size",
    "subscribe",
)
RESOURCE_REQUIRED = ("description", "mime_type", "content")
# One entry of `prompts:` (codegen.spec.rules.prompts), its messages and their contents.
PROMPT_KEYS = ("title", "description", "arguments", "messages")
PROMPT_REQUIRED = ("description", "messages")
PROMPT_MESSAGE_KEYS = ("role", "text", "image", "resource")
PROMPT_IMAGE_KEYS = ("data", "file", "mime_type")
PROMPT_RESOURCE_KEYS = ("uri", "mime_type", "text")
PARAM_KEYS_BY_TYPE: dict[str, tuple[str, ...]] = {
    "boolean": ("type", "description", "default", "from_human"),
    "integer": ("type", "description", "default", "min", "max", "from_human"),
    "number": ("type", "description", "default", "min", "max", "from_human"),
    "string": ("type", "description", "default", "max_length", "enum", "pattern", "from_human"),
}
ALL_PARAM_KEYS: tuple[str, ...] = (
    "type",
    "description",
    "default",
    "min",
    "max",
    "max_length",
    "enum",
    "pattern",
    "from_human",
)
RETURNS_KEYS = ("type", "description", "properties")
FIELD_KEYS_BY_TYPE: dict[str, tuple[str, ...]] = {
    t: ("type", "description") + (("properties",) if t == "object" else ("items",) if t == "array" else ())
    for t in FIELD_TYPES
}
ALL_FIELD_KEYS: tuple[str, ...] = ("type", "description", "properties", "items")

# Spellings from JSON Schema, MCP or other tools that people will type by habit.
KEY_ALIASES: dict[str, str] = {
    "minimum": "min",
    "maximum": "max",
    "maxLength": "max_length",
    "maxlength": "max_length",
    "max_len": "max_length",
    "parameters": "params",
    "args": "params",
    "arguments": "params",
    "inputSchema": "params",
    "properties": "params",
    "return": "returns",
    "result": "returns",
    "output": "returns",
    "outputSchema": "returns",
    "readOnly": "read_only",
    "readOnlyHint": "read_only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "userOnly": "user_only",
    "desc": "description",
    "values": "enum",
    "choices": "enum",
    "regex": "pattern",
    "human": "from_human",
    "ask_human": "from_human",
    "elicit": "from_human",
    "confirmation": "confirm",
    "protocolVersion": "protocol_version",
    "pageSize": "page_size",
}
TYPE_ALIASES: dict[str, str] = {
    "int": "integer",
    "long": "integer",
    "bool": "boolean",
    "float": "number",
    "double": "number",
    "str": "string",
    "text": "string",
    "dict": "object",
    "map": "object",
    "list": "array",
    "null": "none",
    "void": "none",
}
PARAM_KEY_OWNERS: dict[str, str] = {
    "min": "integer and number",
    "max": "integer and number",
    "max_length": "string",
    "enum": "string",
    "pattern": "string",
}

MISSING_HINTS: dict[str, str] = {
    "device": "add a `device:` mapping with at least `name` and `version`",
    "tools": "add `tools:` with a list of tools",
    "name": "add `name: ...`",
    "version": 'add `version: "1.0.0"`',
    "description": "add `description: ...`: the assistant reads it to decide when to call the tool",
    "type": "add `type: ...`",
    "properties": "add `properties:` mapping each property name to `{type: ...}`",
    "items": "add `items: {type: ...}` describing the elements",
}

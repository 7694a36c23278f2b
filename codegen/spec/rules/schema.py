"""``toolspec/toolspec.schema.json``, the editor schema of the spec format, made from the
rule tables.

The key lists, the accepted types and values, which parameter keys go with which type,
the reserved words and the protocol versions all come from ``rules.tables`` and
``spec.names``, the tables the checker reads. What only an editor needs (a description
per key, the JSON type an editor should expect) is written here, one entry per key; a
key the rules accept without an entry here (or the reverse) stops the generation, so a
new key cannot reach the checker without reaching the schema.

The schema is an approximation for editors: the checker's messages, positions and
cross-tool rules (unique names, page sizes, consumer-name collisions) stay the authority.

``python -m mcpgen.codegen.spec.rules.schema toolspec/toolspec.schema.json`` rewrites it in
a checkout (without a path it goes to standard output); a test asserts that the committed
file equals the output.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mcpgen.codegen.spec.model import (
    DEFAULT_PAGE_SIZE,
    DEFAULT_PROTOCOL_VERSION,
    DEFAULT_RESPONSE_BUFFER,
    ERROR_STYLES,
    FIELD_TYPES,
    PARAM_TYPES,
    PROMPT_ROLES,
    RESOURCE_CONTENTS,
)
from mcpgen.codegen.spec.names import CPP_KEYWORDS, IDENTIFIER_RE, PYTHON_RESERVED
from mcpgen.codegen.spec.rules.events import EVENT_KEYS, EVENT_NAME_RE
from mcpgen.codegen.spec.rules.resources import MAX_SIZE_LIMIT, MIN_RESPONSE_BUFFER, TEMPLATE_RE, URI_RE
from mcpgen.codegen.spec.rules.tables import (
    ALL_FIELD_KEYS,
    ALL_PARAM_KEYS,
    DEVICE_KEYS,
    DEVICE_REQUIRED,
    FIELD_KEYS_BY_TYPE,
    FIRMWARE_KEYS,
    MAX_CONTENT_ITEMS,
    PARAM_KEYS_BY_TYPE,
    PROMPT_KEYS,
    PROMPT_MESSAGE_KEYS,
    PROMPT_REQUIRED,
    PROMPT_RESOURCE_KEYS,
    PROTOCOL_VERSIONS,
    RESOURCE_KEYS,
    RESOURCE_REQUIRED,
    RETURNS_KEYS,
    SIMPLE_RETURN_KINDS,
    TOOL_KEYS,
    TOOL_REQUIRED,
    TOP_KEYS,
    TOP_REQUIRED,
)
from mcpgen.codegen.spec.rules.types import TYPE_KEYS, TYPE_NAME_RE
from mcpgen.llm_names import MAX_LLM_NAME
from mcpgen.protocol import CONTENT_ITEM_KINDS

Schema = dict[str, Any]

NONEMPTY = "\\S"  # the checker refuses blank strings where this pattern is used
# The tool name pattern: the MCP characters, no `__` (an LLM function name uses `__` for
# `.`), at most MAX_LLM_NAME characters (the checker also counts each `.` twice).
TOOL_NAME_PATTERN = f"^(?!.*__)[A-Za-z0-9_.-]{{1,{MAX_LLM_NAME}}}$"


def _ref(name: str) -> Schema:
    return {"$ref": f"#/definitions/{name}"}


def _names_to(definition: str) -> Schema:
    """A mapping from identifiers to ``definition`` (params, properties)."""
    return {"type": "object", "propertyNames": _ref("identifier"), "additionalProperties": _ref(definition)}


TOP: dict[str, Schema] = {
    "device": _ref("device"),
    "types": {
        "type": ["object", "null"],
        "propertyNames": {"type": "string", "pattern": TYPE_NAME_RE.pattern},
        "additionalProperties": _ref("type"),
        "description": "Named object shapes, written once: name -> {description, fields}. A parameter "
        "(or a field) of `type: <Name>` takes such an object; published as $defs/$ref.",
    },
    "tools": {
        "type": "array",
        "minItems": 1,
        "items": _ref("tool"),
        "description": "The device's tools, in tools/list order.",
    },
    "events": {
        "type": ["object", "null"],
        "propertyNames": {"type": "string", "pattern": EVENT_NAME_RE.pattern},
        "additionalProperties": _ref("event"),
        "description": "Device-initiated events: name -> event. The device sends each as the JSON-RPC "
        "notification notifications/events/<name> with every parameter in params.",
    },
    "resources": {
        "type": ["object", "null"],
        "propertyNames": {"type": "string", "pattern": EVENT_NAME_RE.pattern},
        "additionalProperties": _ref("resource"),
        "description": "Documents the device serves with MCP resources/read: name -> resource.",
    },
    "firmware": {
        "type": ["object", "null"],
        "additionalProperties": False,
        "properties": {
            key: {
                "type": "string",
                "description": f"Sets {env} of the ESP32 build; "
                "`!secret NAME` reads it from secrets.yaml beside the spec or "
                "MCPGEN_SECRET_NAME.",
            }
            for key, env in FIRMWARE_KEYS.items()
        },
        "description": "Settings of the ESP32 firmware build (Wi-Fi, backend, MQTT); they go to "
        "sdkconfig.defaults only, never into generated sources. Secrets: `!secret NAME`.",
    },
    "prompts": {
        "type": ["object", "null"],
        "propertyNames": {"type": "string", "pattern": EVENT_NAME_RE.pattern},
        "additionalProperties": _ref("prompt"),
        "description": "Prompts the bridge serves (prompts/list, prompts/get): name -> prompt. The "
        "device never sees them.",
    },
}

DEVICE: dict[str, Schema] = {
    "name": {
        "type": "string",
        "pattern": "[A-Za-z0-9]",
        "description": "MCP serverInfo.name; also names the Python package (<slug>_tools) and class.",
    },
    "version": {
        "type": ["string", "number"],
        "pattern": NONEMPTY,
        "description": "MCP serverInfo.version. A YAML number is accepted and kept as written.",
    },
    "description": {"type": "string", "description": "Free text about the device."},
    "page_size": {
        "type": "integer",
        "minimum": 1,
        "default": DEFAULT_PAGE_SIZE,
        "description": "Maximum bytes of one tools/list result object; tools beyond it go to the "
        "next page (nextCursor). Every tool's entry must fit alone.",
    },
    "protocol_version": {
        "type": "string",
        "enum": list(PROTOCOL_VERSIONS),
        "default": DEFAULT_PROTOCOL_VERSION,
        "description": "The MCP protocol version the device speaks.",
    },
    "errors": {
        "type": "string",
        "enum": list(ERROR_STYLES),
        "default": ERROR_STYLES[0],
        "description": "How the device reports arguments that break the spec: mcp (a tool result with "
        "isError: true, MCP-correct; the default) or jsonrpc (a JSON-RPC error -32602 with the same "
        "message, which stock xiaozhi-esp32-server backends show the model).",
    },
    "ota": {
        "type": ["boolean", "object"],
        "default": False,
        "description": "Over-the-air updates: adds the built-in user-only tool self.upgrade_firmware "
        "(url, sha256, size, version, allow_downgrade), implemented by the port (docs/ota.md). "
        "A mapping turns them on with signed images only: public_key (the ECDSA P-256 verification "
        "key, a path relative to the spec: espsecure's raw 64-byte key or a PEM public key) and "
        "secure_version (ESP-IDF's anti-rollback counter, default 0).",
        "properties": {
            "public_key": {
                "type": "string",
                "pattern": NONEMPTY,
                "description": "Path of the ECDSA P-256 key images must be signed for.",
            },
            "secure_version": {
                "type": "integer",
                "minimum": 0,
                "maximum": 32,
                "description": "ESP-IDF anti-rollback secure_version of this build.",
            },
        },
        "required": ["public_key"],
        "additionalProperties": False,
    },
    "response_buffer": {
        "type": "integer",
        "minimum": MIN_RESPONSE_BUFFER,
        "maximum": MAX_SIZE_LIMIT,
        "default": DEFAULT_RESPONSE_BUFFER,
        "description": "The reply buffer the firmware is built with "
        "(MCPGEN_RESPONSE_BUFFER_SIZE). "
        "A resource whose max_size cannot fit a reply in it is refused. A build setting: "
        "not in the fingerprint.",
    },
}

TOOL: dict[str, Schema] = {
    "name": {
        "type": "string",
        "pattern": TOOL_NAME_PATTERN,
        "description": "MCP tool name, unique in the spec, e.g. self.light.set_rgb: letters, digits, "
        f"_ - and ., no `__`, at most {MAX_LLM_NAME} characters with each `.` counted twice "
        "(LLM function names turn it into `__`). No two tools may become the same name with `.` -> "
        "`__` or `.` -> `_` (the stock xiaozhi-esp32-server); codegen checks that. Dotted segments "
        "become Python namespaces.",
    },
    "description": {
        "type": "string",
        "pattern": NONEMPTY,
        "description": "What the tool does; the assistant reads this to decide when to call it.",
    },
    "title": {
        "type": "string",
        "pattern": NONEMPTY,
        "description": "Human-readable display name (MCP annotations.title).",
    },
    "user_only": {
        "type": "boolean",
        "default": False,
        "description": "Only the user may trigger this tool, never the assistant.",
    },
    "read_only": {"type": "boolean", "description": "MCP readOnlyHint: the tool does not change the device."},
    "destructive": {"type": "boolean", "description": "MCP destructiveHint: the tool may destroy state."},
    "idempotent": {
        "type": "boolean",
        "description": "MCP idempotentHint: repeating the call has no further effect.",
    },
    "progress": {
        "type": "boolean",
        "default": False,
        "description": "The handler reports progress (ctx.progress) while it runs: tools/list says "
        'so in _meta["mcpgen/progress"], the bindings take on_progress, the bridge relays '
        "notifications/progress to clients that sent a progressToken.",
    },
    "confirm": {
        "type": "string",
        "pattern": NONEMPTY,
        "description": "A question the person must accept before each call (MCP elicitation from the "
        'bridge, a dialog in the console), e.g. "Unlock the front door?"; declined, the call never '
        "reaches the device.",
    },
    "params": {
        **_names_to("param"),
        "type": ["object", "null"],
        "description": "The tool's arguments: name -> parameter. A parameter with a default is optional.",
    },
    "returns": {
        "oneOf": [
            {"type": "string", "enum": list(SIMPLE_RETURN_KINDS)},
            _ref("object_return"),
            {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_CONTENT_ITEMS,
                "items": {"type": "string", "enum": list(CONTENT_ITEM_KINDS)},
            },
        ],
        "description": "What the tool returns: a kind, an object with declared properties, or a "
        "list of MCP content items in order (e.g. [text, image]). Default: none.",
    },
    "handler": {
        "type": "string",
        "pattern": IDENTIFIER_RE.pattern,
        "not": {"enum": sorted(CPP_KEYWORDS)},
        "description": "C++ handler function name in namespace tools; default derived from the name "
        "(self.a.set_b -> a_set_b).",
    },
}

# Event and resource-template parameters: the device sends every one, so no default, and
# nothing is asked of the person.
DEVICE_SENT: list[Schema] = [{"not": {"required": ["default"]}}, {"not": {"required": ["from_human"]}}]

PARAM: dict[str, Schema] = {
    "type": {
        "type": "string",
        "anyOf": [{"enum": list(PARAM_TYPES)}, {"pattern": TYPE_NAME_RE.pattern}],
        "description": "The JSON type of the argument, or the name of one of `types:` (tool parameters "
        "and type fields only).",
    },
    "description": {"type": "string", "description": "What the argument means."},
    "default": {
        "type": list(PARAM_TYPES),
        "description": "Value used when the caller omits the argument; makes it optional.",
    },
    "min": {"type": "number", "description": "Smallest allowed value (integer and number)."},
    "max": {"type": "number", "description": "Largest allowed value (integer and number)."},
    "max_length": {"type": "integer", "minimum": 1, "description": "Longest allowed string, in characters."},
    "enum": {
        "type": "array",
        "minItems": 1,
        "uniqueItems": True,
        "items": {"type": "string"},
        "description": "The allowed strings.",
    },
    "pattern": {
        "type": "string",
        "format": "regex",
        "description": "A regular expression the string must contain a match of (unanchored, as in "
        "JSON Schema; use ^...$ to match the whole string).",
    },
    "from_human": {
        "type": ["boolean", "string"],
        "description": "The value is asked of the person (MCP elicitation), never of the model: "
        "true, or the question to ask. Absent from the inputSchema the model sees; the typed "
        "bindings take it only through human={...}. Not with `pattern`.",
    },
}
# Keys whose value has the parameter's own type (an integer parameter's bounds are integers).
PARAM_TYPED_KEYS: dict[str, tuple[str, ...]] = {"integer": ("default", "min", "max")}

OBJECT_RETURN: dict[str, Schema] = {
    "type": {"const": "object"},
    "description": {"type": "string", "description": "What the result means."},
    "properties": {**_names_to("field"), "description": "name -> field."},
}

FIELD: dict[str, Schema] = {
    "type": {"type": "string", "enum": list(FIELD_TYPES), "description": "The JSON type of the value."},
    "description": {"type": "string", "description": "What the value means."},
    "properties": {**_names_to("field"), "description": "name -> field (object only)."},
    "items": _ref("field"),
}

EVENT: dict[str, Schema] = {
    "description": {"type": "string", "minLength": 1, "description": "When the device sends the event."},
    "params": {
        "type": ["object", "null"],
        "propertyNames": _ref("identifier"),
        "additionalProperties": {"allOf": [_ref("param"), *DEVICE_SENT]},
        "description": "The event's parameters: name -> parameter, like tool parameters but without "
        "`default` (the device always sends every one).",
    },
}


RESOURCE: dict[str, Schema] = {
    "description": {"type": "string", "minLength": 1, "description": "What the resource holds."},
    "mime_type": {
        "type": "string",
        "pattern": "^[^/]+/[^/]+$",
        "description": "MCP mimeType, e.g. application/json.",
    },
    "uri": {
        "type": "string",
        "pattern": URI_RE.pattern,
        "description": "The fixed URI (or use uri_template).",
    },
    "uri_template": {
        "type": "string",
        "pattern": TEMPLATE_RE.pattern,
        "description": "RFC 6570 level 1 template, e.g. lamp://log/{day}; each {var} is one of params.",
    },
    "params": {
        "type": ["object", "null"],
        "propertyNames": _ref("identifier"),
        "additionalProperties": {"allOf": [_ref("param"), *DEVICE_SENT]},
        "description": "The template's variables: name -> parameter, like tool parameters but without "
        "`default`.",
    },
    "content": {
        "type": "string",
        "enum": list(RESOURCE_CONTENTS),
        "description": "text, or binary (bytes the device sends base64-encoded).",
    },
    "max_size": {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_SIZE_LIMIT,
        "description": "Largest content in bytes (before base64); the device refuses more.",
    },
    "subscribe": {
        "type": "boolean",
        "default": False,
        "description": "The device sends notifications/resources/updated when it changes.",
    },
}


TYPE: dict[str, Schema] = {
    "description": {"type": "string", "description": "What the object means."},
    "fields": {
        **_names_to("param"),
        "minProperties": 1,
        "description": "name -> field, typed like a tool parameter (a field with a default is optional).",
    },
}


def _keys_match(what: str, rule_keys: Sequence[str], schema_keys: Mapping[str, Schema]) -> None:
    """The rules and the schema list the same keys, in the same order."""
    if tuple(rule_keys) != tuple(schema_keys):
        raise ValueError(
            f"{what}: the rules accept {', '.join(rule_keys)} but the schema describes "
            f"{', '.join(schema_keys)}; update mcpgen.codegen.spec.rules.schema"
        )


def _mapping(keys: dict[str, Schema], required: Sequence[str], description: str) -> Schema:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(required),
        "properties": keys,
        "description": description,
    }


PROMPT_TEXT = (
    "May hold {{argument}}, {{tool:NAME}} and {{resource:URI}}, filled in as the bridge serves them."
)
PROMPT_MESSAGE: dict[str, Schema] = {
    "role": {"type": "string", "enum": list(PROMPT_ROLES)},
    "text": {"type": "string", "minLength": 1, "description": "Text content. " + PROMPT_TEXT},
    "image": {
        "type": "object",
        "additionalProperties": False,
        "required": ["mime_type"],
        "oneOf": [{"required": ["data"]}, {"required": ["file"]}],
        "properties": {
            "data": {"type": "string", "description": "The image, base64-encoded."},
            "file": {"type": "string", "description": "An image file beside the spec."},
            "mime_type": {"type": "string", "pattern": "^image/[^/]+$"},
        },
        "description": "Image content: data or file, and its mime_type.",
    },
    "resource": {
        "type": "object",
        "additionalProperties": False,
        "required": list(PROMPT_RESOURCE_KEYS),
        "properties": {
            "uri": {"type": "string", "minLength": 1, "description": PROMPT_TEXT},
            "mime_type": {"type": "string", "pattern": "^[^/]+/[^/]+$"},
            "text": {"type": "string"},
        },
        "description": "An embedded resource (uri, mime_type, text).",
    },
}
PROMPT: dict[str, Schema] = {
    "title": {"type": "string", "minLength": 1, "description": "A human-readable name."},
    "description": {"type": "string", "minLength": 1, "description": "What the prompt is for."},
    "arguments": {
        "type": ["object", "null"],
        "propertyNames": _ref("identifier"),
        "additionalProperties": _ref("param"),
        "description": "The prompt's arguments: name -> parameter, typed like tool parameters (a "
        "default makes one optional).",
    },
    "messages": {
        "type": "array",
        "minItems": 1,
        "items": {
            **_mapping(PROMPT_MESSAGE, ("role",), "One message: a role and one content."),
            "oneOf": [{"required": [k]} for k in ("text", "image", "resource")],
        },
        "description": "The messages prompts/get returns.",
    },
}


def _param_type_rules() -> list[Schema]:
    """Per parameter type: keys that belong to other types are refused, typed keys typed."""
    rules = []
    for ptype, allowed in PARAM_KEYS_BY_TYPE.items():
        then: Schema = {}
        for key in ALL_PARAM_KEYS:
            if key == "default" or key in PARAM_TYPED_KEYS.get(ptype, ()):
                then[key] = {"type": ptype}
            elif key not in allowed:
                then[key] = False
        rules.append({"if": {"properties": {"type": {"const": ptype}}}, "then": {"properties": then}})
    return rules


def _field_type_rules() -> list[Schema]:
    """``properties`` only and always on objects, ``items`` only and always on arrays."""
    rules = []
    for ftype, key in (("object", "properties"), ("array", "items")):
        owners = [t for t, keys in FIELD_KEYS_BY_TYPE.items() if key in keys]
        if owners != [ftype]:
            raise ValueError(f"field key {key!r} belongs to {owners}; the schema expects only {ftype}")
        then: Schema = {"required": [key]}
        if ftype == "object":
            then["properties"] = {"items": False}
        rules.append(
            {
                "if": {"properties": {"type": {"const": ftype}}},
                "then": then,
                "else": {"properties": {key: False}},
            }
        )
    return rules


def editor_schema() -> Schema:
    """The JSON Schema (draft 7) of the spec format, from the rule tables."""
    _keys_match("the document", TOP_KEYS, TOP)
    _keys_match("device", DEVICE_KEYS, DEVICE)
    _keys_match("a tool", TOOL_KEYS, TOOL)
    _keys_match("a parameter", ALL_PARAM_KEYS, PARAM)
    _keys_match("an object return", RETURNS_KEYS, OBJECT_RETURN)
    _keys_match("a field", ALL_FIELD_KEYS, FIELD)
    _keys_match("an event", EVENT_KEYS, EVENT)
    _keys_match("a resource", RESOURCE_KEYS, RESOURCE)
    _keys_match("a prompt", PROMPT_KEYS, PROMPT)
    _keys_match("a prompt message", PROMPT_MESSAGE_KEYS, PROMPT_MESSAGE)
    _keys_match("a type", TYPE_KEYS, TYPE)
    identifier = {
        "type": "string",
        "pattern": IDENTIFIER_RE.pattern,
        "not": {"enum": sorted(CPP_KEYWORDS | PYTHON_RESERVED)},
        "description": "A name usable in both C++ and Python: letters, digits and _, not starting with a "
        "digit, not a reserved word of either language.",
    }
    param = _mapping(
        PARAM, ("type",), "One argument of a tool. Keys that do not apply to its type are errors."
    )
    param["allOf"] = _param_type_rules()
    param["description"] = param.pop("description")  # after allOf, as editors show it last
    field = _mapping(
        FIELD, ("type",), "A property of an object result: objects nest with properties, arrays with items."
    )
    field["allOf"] = _field_type_rules()
    field["description"] = field.pop("description")
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "mcpgen tool spec",
        "description": "One YAML file describing the MCP tools of an ESP32 device; codegen generates the "
        "device C++ and the backend Python from it. Reference: toolspec/README.md.",
        "type": "object",
        "additionalProperties": False,
        "required": list(TOP_REQUIRED),
        "properties": TOP,
        "definitions": {
            "identifier": identifier,
            "device": _mapping(DEVICE, DEVICE_REQUIRED, "The device as an MCP server."),
            "tool": _mapping(TOOL, TOOL_REQUIRED, "One MCP tool."),
            "param": param,
            "type": _mapping(TYPE, ("fields",), "A named object shape: fields typed like parameters."),
            "object_return": _mapping(
                OBJECT_RETURN, ("type", "properties"), "An object result with declared properties."
            ),
            "field": field,
            "event": _mapping(EVENT, ("description",), "One device-initiated event."),
            "resource": {
                **_mapping(RESOURCE, RESOURCE_REQUIRED, "One resource: a fixed uri or a uri_template."),
                "oneOf": [{"required": ["uri"]}, {"required": ["uri_template"]}],
            },
            "prompt": _mapping(PROMPT, PROMPT_REQUIRED, "One prompt the bridge serves."),
        },
    }


def schema_text() -> str:
    """The schema as the committed file holds it (two-space indent, final newline)."""
    return json.dumps(editor_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    # The output is named explicitly: a default of the packaged file would rewrite the
    # schema inside site-packages on a wheel install (and "--help" was once taken for a path).
    parser = argparse.ArgumentParser(
        prog="python -m mcpgen.codegen.spec.rules.schema",
        description="Write the editor JSON Schema of the spec format, made from the checker's rule tables.",
        epilog="In a checkout: python -m mcpgen.codegen.spec.rules.schema toolspec/toolspec.schema.json",
    )
    parser.add_argument(
        "path", nargs="?", type=Path, metavar="PATH", help="file to write (default: standard output)"
    )
    args = parser.parse_args(argv)
    text = schema_text()
    if args.path is None or str(args.path) == "-":
        sys.stdout.write(text)
        return 0
    args.path.write_text(text, encoding="utf-8")
    print(f"wrote {args.path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

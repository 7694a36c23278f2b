"""The `resources:` section: one test per rule (message, path, position), the model and
the fingerprint."""

from __future__ import annotations

import pytest

HEAD = """
device: {name: t, version: "1"}
tools:
  - name: self.a
    description: d
"""
R = "resources:\n  status:\n    description: d\n    mime_type: application/json\n    content: text\n"

CASES = [
    pytest.param(
        HEAD + R + "    uri: lamp://status\n    mimetype: x\n",
        11,
        5,
        "resources.status.mimetype",
        "unknown key `mimetype`",
        "did you mean `mime_type`?",
        id="misspelt-key",
    ),
    pytest.param(
        HEAD + R + "    uri: lamp://status\n    uriTemplate: lamp://s/{x}\n",
        11,
        5,
        "resources.status.uriTemplate",
        "unknown key `uriTemplate`",
        "did you mean `uri_template`?",
        id="camel-case-key",
    ),
    pytest.param(
        HEAD + "resources:\n  status:\n    description: d\n    content: text\n    uri: a:b\n",
        7,
        5,
        "resources.status",
        "missing required key `mime_type`",
        "application/json",
        id="missing-mime-type",
    ),
    pytest.param(
        HEAD + R,
        7,
        5,
        "resources.status",
        "missing `uri` or `uri_template`",
        "add `uri: scheme://...`",
        id="missing-uri",
    ),
    pytest.param(
        HEAD + R + "    uri: status\n",
        10,
        10,
        "resources.status.uri",
        "`status` is not a URI",
        "start it with a scheme",
        id="uri-without-scheme",
    ),
    pytest.param(
        HEAD + R + "    uri: lamp://s/{x}\n",
        10,
        10,
        "resources.status.uri",
        "has {...}",
        "`uri_template:`",
        id="variables-in-fixed-uri",
    ),
    pytest.param(
        HEAD + R + "    uri: lamp://a\n    uri_template: lamp://b/{x}\n",
        11,
        5,
        "resources.status.uri_template",
        "either `uri` or `uri_template`, not both",
        "",
        id="both-uris",
    ),
    pytest.param(
        HEAD + R + "    uri_template: lamp://log/{+day}\n    params: {day: {type: integer}}\n",
        10,
        19,
        "resources.status.uri_template",
        "RFC 6570 level 2 expression",
        "write `{day}`",
        id="level-2-template",
    ),
    pytest.param(
        HEAD + R + "    uri_template: lamp://log/{day}{hour}\n"
        "    params: {day: {type: integer}, hour: {type: integer}}\n",
        10,
        19,
        "resources.status.uri_template",
        "two variables side by side",
        "`{a}-{b}`",
        id="adjacent-variables",
    ),
    pytest.param(
        HEAD + R + "    uri_template: lamp://log/{day}\n",
        10,
        19,
        "resources.status.uri_template",
        "template variable `day` has no parameter",
        "add `params:` with `day: {type: string}`",
        id="variable-without-param",
    ),
    pytest.param(
        HEAD
        + R
        + "    uri_template: lamp://log/{day}\n    params: {day: {type: integer}, x: {type: string}}\n",
        11,
        13,
        "resources.status.params.x",
        "parameter `x` is not a variable of `lamp://log/{day}`",
        "add `{x}` to the template",
        id="param-not-in-template",
    ),
    pytest.param(
        HEAD + R + "    uri_template: lamp://log/{day}\n    params: {day: {type: integer, default: 1}}\n",
        11,
        35,
        "resources.status.params.day.default",
        "template variables have no default",
        "remove `default`",
        id="param-default",
    ),
    pytest.param(
        HEAD + R + "    uri_template: lamp://log/{day}\n    params: {day: {type: intger}}\n",
        11,
        26,
        "resources.status.params.day.type",
        "expected a parameter type",
        "did you mean `integer`?",
        id="param-type-misspelt",
    ),
    pytest.param(
        HEAD + R + "    uri: lamp://s\n    params: {day: {type: integer}}\n",
        11,
        5,
        "resources.status.params",
        "this resource has a fixed `uri`",
        "uri_template",
        id="params-with-fixed-uri",
    ),
    pytest.param(
        HEAD + "resources:\n  status:\n    description: d\n    mime_type: text/plain\n    content: txt\n"
        "    uri: a:b\n",
        9,
        14,
        "resources.status.content",
        "expected a content kind (one of text, binary)",
        "`text`",
        id="content-misspelt",
    ),
    pytest.param(
        HEAD + "resources:\n  status:\n    description: d\n    mime_type: json\n    content: text\n"
        "    uri: a:b\n",
        8,
        16,
        "resources.status.mime_type",
        "`json` is not a MIME type",
        "text/plain",
        id="bad-mime-type",
    ),
    pytest.param(
        HEAD + R + "    uri: lamp://s\n    max_size: 0\n",
        11,
        15,
        "resources.status.max_size",
        "expected 1 to",
        "bytes of content",
        id="max-size-zero",
    ),
    pytest.param(
        HEAD + R + "    uri: lamp://s\n    subscribe: yes\n",
        11,
        16,
        "resources.status.subscribe",
        "expected true or false",
        "YAML 1.2",
        id="subscribe-yes",
    ),
    pytest.param(
        HEAD + R + "    uri: lamp://s\n  icon:\n    description: d\n    mime_type: image/png\n"
        "    content: binary\n    uri: lamp://s\n",
        11,
        3,
        "resources.icon",
        "the same URI as `status`",
        "its own URI",
        id="duplicate-uri",
    ),
    pytest.param(
        HEAD + "resources:\n  Status:\n    description: d\n    mime_type: text/plain\n    content: text\n"
        "    uri: a:b\n",
        6,
        3,
        "resources.Status",
        "is not a lowercase identifier",
        "`status`",
        id="name-not-snake-case",
    ),
    pytest.param(
        HEAD.replace("self.a", "self.resources.clear") + R + "    uri: lamp://s\n",
        6,
        3,
        "resources",
        "the Python bindings put resources under `device.resources`",
        "rename the tool",
        id="resources-namespace-taken",
    ),
]


CASES.append(
    pytest.param(
        HEAD.replace('version: "1"}', 'version: "1", page_size: 160}')
        + R.replace("description: d", "description: " + "d" * 40)
        + "    uri: lamp://s\n",
        6,
        3,
        "resources.status",
        "needs 165 bytes, more than device.page_size (160)",
        "raise device.page_size",
        id="entry-over-page-size",
    )
)


NINE = "-".join(f"{{v{i}}}" for i in range(9))
NINE_PARAMS = ", ".join(f"v{i}: {{type: integer}}" for i in range(9))
CASES.append(
    pytest.param(
        HEAD + R + f"    uri_template: a://{NINE}\n    params: {{{NINE_PARAMS}}}\n",
        10,
        19,
        "resources.status.uri_template",
        "has 9 variables",
        "at most 8",
        id="too-many-variables",
    )
)


# Regression (issue 40): a max_size the device's reply buffer cannot hold was accepted, and
# every read of that much content came back -32603 "response buffer too small".
BLOB = (
    "resources:\n  dump:\n    description: d\n    mime_type: application/octet-stream\n    content: binary\n"
)
CASES.append(
    pytest.param(
        HEAD + BLOB + "    uri: lamp://dump\n    max_size: 8192\n",
        11,
        15,
        "resources.dump.max_size",
        "needs a reply of 11128 bytes (in the xiaozhi envelope), more than the device's reply buffer "
        "of 10240 bytes",
        "lower max_size to at most 7527, or build the firmware with -DMCPGEN_RESPONSE_BUFFER_SIZE=11128",
        id="max-size-over-the-reply-buffer",
    )
)
CASES.append(
    pytest.param(
        HEAD.replace('version: "1"}', 'version: "1", response_buffer: 1024}')
        + R
        + "    uri: lamp://s\n    max_size: 2000\n",
        11,
        15,
        "resources.status.max_size",
        "more than the device's reply buffer of 1024 bytes (device.response_buffer",
        "set device.response_buffer: 2193",
        id="max-size-over-a-set-reply-buffer",
    )
)
CASES.append(
    pytest.param(
        HEAD.replace('version: "1"}', 'version: "1", response_buffer: 16}') + R + "    uri: lamp://s\n",
        1,
        50,
        "device.response_buffer",
        "expected 256 to",
        "MCPGEN_RESPONSE_BUFFER_SIZE",
        id="response-buffer-too-small",
    )
)


def test_a_max_size_that_fits_the_reply_buffer_loads(write_spec):
    from mcpgen.codegen.emit import cpp
    from mcpgen.codegen.spec.loader import load_spec
    from mcpgen.codegen.spec.resource_json import largest_content, read_reply_bytes

    fits = largest_content("binary", "application/octet-stream", "lamp://dump", None, 10240)
    assert read_reply_bytes("binary", "application/octet-stream", "lamp://dump", None, fits) <= 10240
    assert read_reply_bytes("binary", "application/octet-stream", "lamp://dump", None, fits + 3) > 10240
    spec = load_spec(write_spec(HEAD + BLOB + f"    uri: lamp://dump\n    max_size: {fits}\n"))
    assert spec.resources[0].max_size == fits and spec.device.response_buffer == 10240
    assert "response_buffer" not in spec.canonical()["device"], "a build setting, not in the fingerprint"
    # a larger buffer lets a larger max_size through, and the header holds the build to it
    big = HEAD.replace('version: "1"}', 'version: "1", response_buffer: 65536}')
    spec = load_spec(write_spec(big + BLOB + "    uri: lamp://dump\n    max_size: 32768\n", name="big.yaml"))
    header = cpp.emit(spec)["firmware/generated/mcp_tools.h"]
    assert "#if MCPGEN_RESPONSE_BUFFER_SIZE < 65536" in header
    plain = load_spec(write_spec(HEAD + R + "    uri: a:b\n", name="d.yaml"))
    assert "MCPGEN_RESPONSE_BUFFER_SIZE" not in cpp.emit(plain)["firmware/generated/mcp_tools.h"]


@pytest.mark.parametrize(("text", "line", "column", "path", "message", "hint"), CASES)
def test_resource_validation_error(one_error, text, line, column, path, message, hint):
    error = one_error(text)
    assert error.path == path, error.format()
    assert message in error.message, error.format()
    assert hint in error.hint, error.format()
    assert (error.line, error.column) == (line, column), error.format()


SPEC = (
    HEAD
    + """resources:
  status:
    description: The state as JSON.
    mime_type: application/json
    uri: lamp://status
    content: text
  log:
    description: One day of the log.
    mime_type: application/octet-stream
    uri_template: lamp://log/{day}/{kind}
    params:
      kind: {type: string, enum: [short, long]}
      day: {type: integer, min: 0, max: 6}
    content: binary
    max_size: 512
    subscribe: true
"""
)


def test_resources_in_the_model_and_the_fingerprint(write_spec):
    from mcpgen.codegen.spec.loader import load_spec

    spec = load_spec(write_spec(SPEC))
    status, log = spec.resources
    assert (status.name, status.uri, status.uri_template, status.content) == (
        "status",
        "lamp://status",
        None,
        "text",
    )
    assert status.params == () and status.max_size is None and status.subscribe is False
    assert log.uri is None and log.uri_template == "lamp://log/{day}/{kind}"
    assert [p.name for p in log.params] == ["day", "kind"]
    assert log.params[0].maximum == 6 and log.params[1].enum == ("short", "long")
    assert (log.content, log.max_size, log.subscribe, log.handler) == ("binary", 512, True, "read_log")
    without = load_spec(write_spec(HEAD, name="plain.yaml"))
    assert "resources" not in without.canonical()
    assert spec.fingerprint != without.fingerprint
    changed = load_spec(write_spec(SPEC.replace("max_size: 512", "max_size: 511"), name="changed.yaml"))
    assert changed.fingerprint != spec.fingerprint


def test_a_spec_without_resources_hashes_as_before(write_spec):
    """The canonical JSON of a spec without resources is the one from before resources
    existed: the same bytes, so the same fingerprint (the fixture's value was computed by
    the loader before this change)."""
    from mcpgen.codegen.spec.loader import load_spec

    spec = load_spec(write_spec(HEAD))
    assert spec.canonical_json() == (
        '{"device":{"description":"","name":"t","page_size":8000,"protocol_version":"2024-11-05",'
        '"version":"1"},"tools":[{"description":"d","destructive":null,"handler":"a","idempotent":null,'
        '"name":"self.a","params":[],"read_only":null,"returns":{"description":"","kind":"none",'
        '"properties":[]},"title":null,"user_only":false}]}'
    )
    assert spec.fingerprint == "2dcd26432bf6f9c2"
    empty = load_spec(write_spec(HEAD + "resources:\n", name="empty.yaml"))
    assert empty.fingerprint == spec.fingerprint


def test_a_released_spec_keeps_its_resources(write_spec):
    """The history stores a release as canonical JSON: read back, its resources (and so its
    fingerprint) are the same, or `codegen release` calls its own file edited."""
    from mcpgen.codegen.spec.canonical import spec_from_canonical
    from mcpgen.codegen.spec.loader import load_spec

    spec = load_spec(write_spec(SPEC))
    back = spec_from_canonical(spec.canonical())
    assert back.resources == spec.resources
    assert back.fingerprint == spec.fingerprint

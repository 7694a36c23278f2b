"""The small, commented spec that ``codegen new NAME`` writes to start a device from."""

from __future__ import annotations

import json
import re
from typing import Optional

from mcpgen.codegen.spec.rules import device_name_problem

_TEMPLATE = """\
{modeline}# Tool spec of the device {comment_name}: one file describes its MCP tools, and
# `codegen generate` turns it into device C++ and backend Python.
# The format is documented in toolspec/README.md.

device:
  name: {name}           # MCP serverInfo.name; also names the Python package and class
  version: "0.1.0"       # bump when the tools change
  description: A new device.
  # page_size: 8000              # max bytes of one tools/list result page
  # protocol_version: 2024-11-05  # MCP version the device speaks

tools:
  # Tool names are MCP names; `self.` prefixes the device's own tools. Dotted parts
  # become Python namespaces: `self.led.set` is `device.led.set(...)` in the bindings
  # and the C++ handler `tools::led_set`.
  - name: self.get_status
    description: Report the uptime of the device in seconds.
    read_only: true
    returns:
      type: object
      properties:
        uptime_s: {{type: integer, description: Seconds since boot.}}

  - name: self.led.set
    description: Switch the status LED on or off and set its brightness.
    idempotent: true
    params:
      on: {{type: boolean, description: True switches the LED on.}}
      brightness:
        type: integer
        min: 0
        max: 100
        default: 100             # a parameter with a default is optional
        description: Brightness in percent.
    returns: boolean

  - name: self.display.say
    description: Show a short message on the display.
    params:
      text: {{type: string, max_length: 64}}
      style: {{type: string, enum: [plain, bold], default: plain}}
    returns: none
"""


def starter_spec(name: str, schema_ref: Optional[str] = None) -> str:
    """A valid, commented YAML spec for a new device called ``name``.

    ``schema_ref`` (a path or URL of ``toolspec.schema.json``) adds the
    ``yaml-language-server`` modeline so editors complete and check the file.
    Raises ``ValueError`` when ``name`` cannot name a device.
    """
    problem = device_name_problem(name)
    if problem:
        raise ValueError(f"{problem[0]} ({problem[1]})")
    modeline = f"# yaml-language-server: $schema={schema_ref}\n" if schema_ref else ""
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", name) and name.lower() not in ("true", "false", "null"):
        yaml_name = name
    else:  # a JSON string is a valid YAML double-quoted scalar: safe for any name
        yaml_name = json.dumps(name, ensure_ascii=False)
    return _TEMPLATE.format(modeline=modeline, name=yaml_name, comment_name=name)

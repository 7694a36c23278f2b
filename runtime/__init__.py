"""mcpgen backend runtime: talk MCP to ESP32 devices from Python.

The hot path (``runtime.wire``, ``runtime.rpcsession``, ``runtime.deadlines``, together
``runtime.codec``: frame decoding, reply correlation, request encoding, deadlines;
``runtime.validate``: argument validation; ``runtime.wslink``: the gateway's per-frame
WebSocket listener; ``runtime.mqttwire``: MQTT PUBLISH framing) is compiled by Cython
when installed normally and runs as plain Python when built or imported with
``MCPGEN_PURE_PYTHON=1``. ``runtime.COMPILED`` tells which one is in use.
"""

from __future__ import annotations

import importlib

from mcpgen.runtime._purepy import COMPILED_MODULES, is_compiled, prefer_source

#: The compiled modules (``_purepy.COMPILED_MODULES``, the list setup.py compiles).
HOT_MODULES: tuple[str, ...] = COMPILED_MODULES
prefer_source(HOT_MODULES)

from mcpgen.runtime.auth import Authenticator, Handshake, HmacAuth, TokenAuth  # noqa: E402
from mcpgen.runtime.device import Device, ToolInfo  # noqa: E402
from mcpgen.runtime.errors import (  # noqa: E402
    DeviceDisconnected,
    DeviceTimeout,
    McpDeviceError,
    NotSupported,
    ProtocolError,
    RpcError,
    SpecMismatch,
    ToolError,
    UnsupportedPattern,
    ValidationError,
)
from mcpgen.runtime.fanout import Fanout, FanoutResults  # noqa: E402
from mcpgen.runtime.fleet import MqttFleet as MqttFleet  # noqa: E402  (aiomqtt is imported on start)
from mcpgen.runtime.gateway import Gateway  # noqa: E402
from mcpgen.runtime.hub import DeviceHub  # noqa: E402
from mcpgen.runtime.llm import NameMap, to_anthropic_tools, to_openai_tools  # noqa: E402
from mcpgen.runtime.mqtt import MqttGateway as MqttGateway  # noqa: E402  (aiomqtt is imported on start)
from mcpgen.runtime.options import SessionOptions  # noqa: E402
from mcpgen.runtime.transports import connect_process, connect_serial  # noqa: E402
from mcpgen.runtime.validate import SchemaValidator  # noqa: E402
from mcpgen.runtime.wire import Image  # noqa: E402

#: True when every hot-path module is a compiled extension module.
COMPILED: bool = all(is_compiled(importlib.import_module(name)) for name in COMPILED_MODULES)

from mcpgen import __version__ as __version__  # noqa: E402

__all__ = [
    "COMPILED",
    "HOT_MODULES",
    "Authenticator",
    "Device",
    "DeviceDisconnected",
    "DeviceHub",
    "DeviceTimeout",
    "Fanout",
    "FanoutResults",
    "Gateway",
    "Handshake",
    "HmacAuth",
    "Image",
    "McpDeviceError",
    "MqttFleet",
    "MqttGateway",
    "NameMap",
    "ProtocolError",
    "RpcError",
    "SchemaValidator",
    "SessionOptions",
    "NotSupported",
    "SpecMismatch",
    "TokenAuth",
    "ToolError",
    "ToolInfo",
    "UnsupportedPattern",
    "ValidationError",
    "connect_process",
    "connect_serial",
    "to_anthropic_tools",
    "to_openai_tools",
]

"""mcpgen backend runtime: talk MCP to ESP32 devices from Python.

The hot path (``runtime.core.wire``, ``runtime.core.rpcsession``, ``runtime.core.deadlines``, together
``runtime.core.codec``: frame decoding, reply correlation, request encoding, deadlines;
``runtime.core.validate``: argument validation; ``runtime.links.websocket.wslink``: the gateway's per-frame
WebSocket listener; ``runtime.links.mqtt.mqttwire``: MQTT PUBLISH framing) is compiled by Cython
when installed normally and runs as plain Python when built or imported with
``MCPGEN_PURE_PYTHON=1``. ``runtime.COMPILED`` tells which one is in use.
"""

from __future__ import annotations

import importlib

from mcpgen.extras import missing_extra
from mcpgen.runtime import _moved
from mcpgen.runtime._purepy import COMPILED_MODULES, is_compiled, prefer_source, pure_python_requested

#: The compiled modules (``_purepy.COMPILED_MODULES``, the list setup.py compiles).
HOT_MODULES: tuple[str, ...] = COMPILED_MODULES
prefer_source(HOT_MODULES)
_moved.install()  # the 0.2 module paths (mcpgen.runtime.device, ...) still import
if pure_python_requested():
    try:  # the modules' source imports Cython's shadow module: the [pure] extra
        import cython  # noqa: F401
    except ModuleNotFoundError as exc:
        raise missing_extra(exc, "MCPGEN_PURE_PYTHON=1 runs the runtime from source") from None

from mcpgen.runtime.auth import Authenticator, Handshake, HmacAuth, TokenAuth  # noqa: E402
from mcpgen.runtime.core.validate import SchemaValidator  # noqa: E402
from mcpgen.runtime.core.wire import Audio, EmbeddedResource, Image  # noqa: E402
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
from mcpgen.runtime.links.hub import DeviceHub  # noqa: E402
from mcpgen.runtime.links.mqtt.fleet import MqttFleet as MqttFleet  # noqa: E402  (aiomqtt is imported on start)
from mcpgen.runtime.links.mqtt.gateway import MqttGateway as MqttGateway  # noqa: E402  (aiomqtt is imported on start)
from mcpgen.runtime.links.transports import connect_process, connect_serial  # noqa: E402
from mcpgen.runtime.links.websocket.gateway import Gateway  # noqa: E402
from mcpgen.runtime.session.device import Device, ToolInfo  # noqa: E402
from mcpgen.runtime.session.fanout import Fanout, FanoutResults  # noqa: E402
from mcpgen.runtime.session.llm import NameMap, to_anthropic_tools, to_openai_tools  # noqa: E402
from mcpgen.runtime.session.options import SessionOptions  # noqa: E402

#: True when every hot-path module is a compiled extension module.
COMPILED: bool = all(is_compiled(importlib.import_module(name)) for name in COMPILED_MODULES)

from mcpgen import __version__ as __version__  # noqa: E402

__all__ = [
    "COMPILED",
    "HOT_MODULES",
    "Audio",
    "Authenticator",
    "Device",
    "DeviceDisconnected",
    "DeviceHub",
    "DeviceTimeout",
    "EmbeddedResource",
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

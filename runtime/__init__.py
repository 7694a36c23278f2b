"""mcpgen backend runtime: talk MCP to ESP32 devices from Python.

The hot path (``runtime.codec``: frame decoding, reply correlation, request encoding;
``runtime.validate``: argument validation) is compiled by Cython when installed normally
and runs as plain Python when built or imported with ``MCPGEN_PURE_PYTHON=1``.
``runtime.COMPILED`` tells which one is in use.
"""

from __future__ import annotations

from runtime._purepy import is_compiled, prefer_source

HOT_MODULES: tuple[str, ...] = ("runtime.codec", "runtime.validate")
prefer_source(HOT_MODULES)

from runtime import codec, validate  # noqa: E402
from runtime.auth import Authenticator, Handshake, HmacAuth, TokenAuth  # noqa: E402
from runtime.codec import Image  # noqa: E402
from runtime.device import Device, ToolInfo  # noqa: E402
from runtime.errors import (  # noqa: E402
    DeviceDisconnected,
    DeviceTimeout,
    McpDeviceError,
    ProtocolError,
    RpcError,
    SpecMismatch,
    ToolError,
    ValidationError,
)
from runtime.gateway import Gateway  # noqa: E402
from runtime.llm import NameMap, to_anthropic_tools, to_openai_tools  # noqa: E402
from runtime.mqtt import MqttGateway as MqttGateway  # noqa: E402  (aiomqtt is imported on start)
from runtime.transports import connect_process, connect_serial  # noqa: E402
from runtime.validate import SchemaValidator  # noqa: E402

#: True when every hot-path module is a compiled extension module.
COMPILED: bool = all(is_compiled(m) for m in (codec, validate))

__version__ = "0.1.0"

__all__ = [
    "COMPILED",
    "HOT_MODULES",
    "Authenticator",
    "Device",
    "DeviceDisconnected",
    "DeviceTimeout",
    "Gateway",
    "Handshake",
    "HmacAuth",
    "Image",
    "McpDeviceError",
    "MqttGateway",
    "NameMap",
    "ProtocolError",
    "RpcError",
    "SchemaValidator",
    "SpecMismatch",
    "TokenAuth",
    "ToolError",
    "ToolInfo",
    "ValidationError",
    "connect_process",
    "connect_serial",
    "to_anthropic_tools",
    "to_openai_tools",
]

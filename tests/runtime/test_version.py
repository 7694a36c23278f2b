"""What the runtime and the bridge say about themselves is the package's version (one
source: pyproject.toml), not a number written into a module."""

from __future__ import annotations

import importlib.metadata

import orjson

import mcpgen
from mcpgen.runtime.bridge import Bridge
from mcpgen.runtime.core.codec import RpcSession
from mcpgen.runtime.session import device


def test_initialize_and_the_bridge_report_the_package_version() -> None:
    version = importlib.metadata.version("mcpgen")
    assert mcpgen.__version__ == version
    init = orjson.loads(RpcSession().initialize())
    assert init["params"]["clientInfo"]["version"] == version
    assert device.CLIENT_VERSION == version
    assert Bridge().server_info["version"] == version

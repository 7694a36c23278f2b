"""MQTT fixtures: a Mosquitto broker per test, the default device's simulator and bindings.

Without ``mosquitto`` (or ``libmosquitto-dev``, or aiomqtt) the suite is skipped, except
in CI (env ``CI`` set) where that is a failure: CI must test the MQTT transport.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from mqtt_testlib import REPO, Broker, Built, build, mosquitto_available  # noqa: E402

from mcpgen.codegen.targets.host import mqtt_available


def _require(ok: bool, what: str) -> None:
    if ok:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{what} is required in CI (scripts/dev.sh setup installs it)", pytrace=False)
    pytest.skip(f"{what} is not installed")


@pytest.fixture(scope="session", autouse=True)
def _mqtt_tools() -> None:
    _require(mosquitto_available(), "mosquitto (Debian package 'mosquitto')")
    _require(importlib.util.find_spec("aiomqtt") is not None, "aiomqtt (pip)")
    _require(mqtt_available(), "libmosquitto-dev (Debian package; the simulator's --mqtt mode)")


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(REPO / "toolspec" / "default_device.yaml", tmp_path_factory.mktemp("mqtt_default"))


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    b = Broker(tmp_path).start()
    yield b
    b.stop()


@pytest.fixture(autouse=True)
def _compiled_build_really_used() -> Iterator[None]:
    """CI sets MCPGEN_EXPECT_COMPILED: the suite must run on the build it claims."""
    expect = os.environ.get("MCPGEN_EXPECT_COMPILED")
    if expect is not None:
        from mcpgen import runtime

        assert runtime.COMPILED == (expect == "1"), f"runtime.COMPILED={runtime.COMPILED}, expected {expect}"
    yield

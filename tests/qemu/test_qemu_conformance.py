"""The host simulator's conformance suite (tests/device/test_device_stdio.py), run over the
UART of each QEMU image (Cortex-M3 and RV32: the image fixtures are parametrized by target).

Nothing is copied: the test functions are imported and collected here, where the
fixtures of tests/qemu/conftest.py (same names as tests/device/conftest.py) hand them a
QemuSim instead of a StdioSim; tests that start their own simulator get QemuSim too.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest
from qemu_uart_driver import QemuSim

DEVICE_TESTS = Path(__file__).resolve().parents[1] / "device"


def _import_host_suite():  # noqa: ANN202
    """Imports tests/device/test_device_stdio.py; it does `from conftest import ...`, so its
    own conftest stands in as `conftest` while it loads, whatever pytest loaded last."""
    if "test_device_stdio" in sys.modules:
        return sys.modules["test_device_stdio"]
    spec = importlib.util.spec_from_file_location("mcpgen_device_conftest", DEVICE_TESTS / "conftest.py")
    assert spec is not None and spec.loader is not None
    device_conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(device_conftest)
    saved = sys.modules.get("conftest")
    sys.modules["conftest"] = device_conftest
    try:
        return importlib.import_module("test_device_stdio")
    finally:
        if saved is not None:
            sys.modules["conftest"] = saved
        else:
            sys.modules.pop("conftest", None)


host_suite = _import_host_suite()

pytestmark = pytest.mark.slow

for _name in dir(host_suite):
    if _name.startswith("test_"):
        globals()[_name] = getattr(host_suite, _name)


@pytest.fixture(autouse=True)
def _simulator_is_qemu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests that construct their own simulator from an image get the QEMU driver."""
    monkeypatch.setattr(host_suite, "StdioSim", QemuSim)

"""On-target tests in ESP-IDF's own form (pytest-embedded): the example specs built by the
user's ESP-IDF with the serial transport, then ``codegen selftest`` against the device, in
Espressif's QEMU or on a board. They run only when asked:

    pytest tests/embedded --target esp32c3 --embedded-services idf,qemu
    pytest tests/embedded --target esp32c3 --embedded-services esp,idf,serial --port /dev/ttyUSB0

and need pytest-embedded (``pip install pytest-embedded pytest-embedded-idf
pytest-embedded-qemu pytest-embedded-serial-esp``: not a dependency of the normal suite) and
ESP-IDF (``. $IDF_PATH/export.sh``; Espressif's QEMU for ``qemu``). Without them every test
skips with one stated reason, as the ESP-IDF header checks do (tests/esp32).

This conftest overrides pytest-embedded's ``app_path`` and ``build_dir`` fixtures: the app
is the spec's generated project, built here (once per spec) into ``build-qemu``, the
directory ``codegen run --qemu`` uses; under ``qemu`` the UART goes to a pty
(``qemu_extra_args``) so the self-test opens it as it opens a board's port.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPECS = {
    "default": REPO / "toolspec" / "default_device.yaml",
    "desk_lamp": REPO / "toolspec" / "desk_lamp.yaml",
}
INSTALL = "pip install pytest-embedded pytest-embedded-idf pytest-embedded-qemu pytest-embedded-serial-esp"
ASK = "pytest tests/embedded --target esp32c3 --embedded-services idf,qemu"


def _services(config: pytest.Config) -> list[str]:
    try:
        value = config.getoption("embedded_services")
    except ValueError:  # pytest-embedded is not loaded: the option does not exist
        return []
    return [s for s in str(value or "").split(",") if s]


def skip_reason(config: pytest.Config) -> str | None:
    """Why the on-target tests cannot run here (None: they can)."""
    if importlib.util.find_spec("pytest_embedded") is None:
        return f"pytest-embedded is not installed ({INSTALL}); then: {ASK}"
    services = _services(config)
    if "idf" not in services:
        return (
            f"on-target tests run only when asked: {ASK} (or --embedded-services esp,idf,serial --port PORT)"
        )
    from mcpgen.codegen.run.esp_qemu import EspQemuError, find_idf

    try:
        find_idf()
    except EspQemuError as exc:
        return str(exc)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = skip_reason(config)
    if reason is None:
        return
    mark = pytest.mark.skip(reason=reason)
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(mark)


_built: dict[tuple[str, str], Path] = {}


def build_spec(spec_name: str, target: str, outdir: Path) -> Path:
    """The spec's ESP-IDF project (serial transport on UART0) built by idf.py; its directory."""
    key = (spec_name, target)
    if key not in _built:
        from mcpgen.codegen.run.esp_qemu import build_image
        from mcpgen.codegen.targets.base import BuildContext, BuildOptions

        ctx = BuildContext.load(SPECS[spec_name], outdir / f"{spec_name}-{target}", BuildOptions(log=print))
        _built[key] = build_image(ctx, target).parent.parent  # BUILD/qemu_flash.bin -> the project
    return _built[key]


@pytest.fixture
def spec_name(request: pytest.FixtureRequest) -> str:
    return str(getattr(request, "param", "default"))


@pytest.fixture
def app_path(spec_name: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    target = str(request.config.getoption("target", default="esp32c3") or "esp32c3")
    out = Path(os.environ.get("MCPGEN_EMBEDDED_OUT", str(tmp_path_factory.getbasetemp() / "embedded")))
    return str(build_spec(spec_name, target, out))


@pytest.fixture
def build_dir() -> str:
    return "build-qemu"


@pytest.fixture
def qemu_extra_args() -> str:
    # UART0 on a host pty (QEMU names it on its output), no network device.
    return "-serial pty -nic none"

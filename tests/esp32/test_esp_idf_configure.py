"""ESP-IDF's own CMake configure of the generated project, for every release given.

`mcpgen.codegen.checks.esp_idf_configure` runs `cmake -G Ninja` (what `idf.py reconfigure`
runs) on the generated project against each ESP-IDF tree of MCPGEN_ESP_IDF_TREES, per
transport, and reports whether the `idf` floor of the generated `idf_component.yml` tells
the truth. CI has no ESP-IDF tree: the test that needs one skips, naming the variable.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from esp32_testlib import TOOLSPEC

from mcpgen.codegen.checks import esp_idf_configure as cfg
from mcpgen.codegen.checks.esp_idf_headers import CheckSetupError
from mcpgen.codegen.emit import esp32_transport

# The head of a failed configure as ESP-IDF 5.1.7 prints it for the serial project.
FAILED_51 = """-- Building ESP-IDF components for target esp32c3
CMake Error at /idf/tools/cmake/build.cmake:266 (message):
  Failed to resolve component 'esp_driver_uart'.
Call Stack (most recent call first):
  /idf/tools/cmake/build.cmake:308 (__build_resolve_and_add_req)

-- Configuring incomplete, errors occurred!
"""


def test_first_error_is_the_cmake_error_and_its_message_on_one_line() -> None:
    assert cfg.first_error(FAILED_51, Path("/idf")) == (
        "CMake Error at tools/cmake/build.cmake:266 (message): Failed to resolve component 'esp_driver_uart'."
    )
    assert cfg.first_error(
        "CMake Error at /idf/tools/cmake/component.cmake:321 (message):\n  Include directory\n"
        "  '/idf/components/mbedtls/x' is not a directory.\n",
        Path("/idf"),
    ) == (
        "CMake Error at tools/cmake/component.cmake:321 (message): "
        "Include directory 'components/mbedtls/x' is not a directory."
    )
    cycle = (
        "CMake Error: The inter-target dependency graph contains a cycle:\n" + '  "x" depends on "y"\n' * 100
    )
    assert len(cfg.first_error(cycle, Path("/idf"))) == cfg.ERROR_CHARS
    assert cfg.first_error("ninja: error: loading 'build.ninja'\n", Path("/idf")) == (
        "ninja: error: loading 'build.ninja'"
    )


def test_the_floor_admits_by_release_number() -> None:
    assert cfg.admits("5.1", "5.1.0") and cfg.admits("5.1", "5.10.0") and cfg.admits("5.3", "6.0.2")
    assert not cfg.admits("5.3", "5.2.7")


def test_registry_components_come_from_the_checkouts_named(tmp_path: Path) -> None:
    client = tmp_path / "protocols" / "components" / "esp_websocket_client"
    client.mkdir(parents=True)
    (client / "CMakeLists.txt").write_text("", encoding="utf-8")
    mqtt = tmp_path / "esp-mqtt"
    mqtt.mkdir()
    (mqtt / "CMakeLists.txt").write_text("", encoding="utf-8")
    env = {"MCPGEN_ESP_PROTOCOLS": str(tmp_path / "protocols"), "MCPGEN_ESP_MQTT": str(mqtt)}
    assert cfg.registry_components("websocket", "5.1.7", env) == {"esp_websocket_client": client}
    assert cfg.registry_components("serial", "6.0.2", env) == {}
    # esp-mqtt is ESP-IDF's own component up to 5.5, the registry's espressif/mqtt from 6.0
    assert cfg.registry_components("mqtt", "5.5.5", env) == {}
    assert cfg.registry_components("mqtt", "6.0.2", env) == {"mqtt": mqtt}
    with pytest.raises(CheckSetupError, match="MCPGEN_ESP_MQTT"):
        cfg.registry_components("mqtt", "6.0.2", {})


def test_trees_are_split_like_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    joined = os.pathsep.join(["/a/v5.3.5", "", "/b/v5.5.5"])
    assert cfg.trees_from_env({cfg.ENV_TREES: joined}) == [Path("/a/v5.3.5"), Path("/b/v5.5.5")]


def test_a_failure_is_reported_only_where_the_manifest_admits_the_release() -> None:
    below = cfg.Result("5.2.7", "serial", False, False, "no esp_driver_uart", 0, 1.0)
    lie = cfg.Result("5.2.7", "serial", True, False, "no esp_driver_uart", 0, 1.0)
    fine = cfg.Result("5.3.5", "serial", True, True, "", 34, 1.0)
    assert cfg.untruthful([below, fine]) == []
    assert cfg.untruthful([below, lie, fine]) == [lie]
    assert "| 5.3.5 | serial | yes | configured | 34 | 1.0 |" in cfg.table([fine])


# ------------------------------------------------------------------------------ ESP-IDF trees


def test_every_release_the_manifest_admits_configures_the_project(tmp_path: Path) -> None:
    trees = cfg.trees_from_env()
    if not trees:
        pytest.skip(f"ESP-IDF configure needs ESP-IDF trees: set {cfg.ENV_TREES} (docs/firmware.md)")
    if shutil.which("cmake") is None or shutil.which("ninja") is None:
        pytest.skip("cmake and ninja not found")
    results = cfg.run_matrix(trees, TOOLSPEC / "desk_lamp.yaml", tmp_path)
    print("\n" + cfg.table(results))
    assert cfg.untruthful(results) == [], cfg.table(cfg.untruthful(results))
    for r in results:  # what the floor says: the serial transport's drivers came in 5.3
        floor = esp32_transport.MIN_IDF["serial" if r.case == "serial" else r.case.split("+")[0]]
        assert r.admitted == cfg.admits(floor, r.release)
        if r.case == "serial" and not r.admitted:
            assert "esp_driver_uart" in r.error

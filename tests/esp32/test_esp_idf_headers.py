"""The ESP-IDF port and the generated sources compile against the real ESP-IDF headers.

`mcpgen.codegen.checks.esp_idf_headers` runs the host g++ over the generated project with the
headers of local checkouts (ESP-IDF with submodules, espressif/esp-protocols, the ESP
newlib), an sdkconfig.h from ESP-IDF's kconfgen, and the target's data model. CI has no
network and no checkouts: the tests that need them skip, naming the variables to set.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from esp32_testlib import TOOLSPEC

from mcpgen.codegen import resources
from mcpgen.codegen.checks import esp_idf_headers as chk
from mcpgen.codegen.targets.esp32 import BOARDS, generate_project

PORT_CMAKE = resources.firmware_template() / "ports" / "esp_idf" / "CMakeLists.txt"


def _sources() -> chk.Sources:
    sources = chk.Sources.from_env()
    if sources is None:
        pytest.skip(
            "ESP-IDF header check needs local checkouts: set "
            + ", ".join(chk.ENV_NAMES)
            + " (see docs/firmware.md, 'Checking the port against ESP-IDF')"
        )
    if shutil.which("g++") is None:
        pytest.skip("g++ not found")
    pytest.importorskip("kconfgen", reason="esp-idf-kconfig not installed (pip install esp-idf-kconfig)")
    sources.validate()  # a wrong setting fails loudly instead of skipping
    return sources


def _quiet(_: str) -> None:
    pass


# ---------------------------------------------------------------------------- no checkout needed


def test_flags_follow_the_port_cmakelists() -> None:
    comp = chk.component_flags(PORT_CMAKE)
    assert comp.include_dirs == [".", "generated"]
    for flag in ("-Wall", "-Wextra", "-Werror", "-fno-exceptions", "-fno-rtti", "-DMCPGEN_PORT_ESP_IDF=1"):
        assert flag in comp.options
    assert set(comp.per_file) <= {"port/mcpgen_esp_port.cpp"}


def test_idf_flags_are_read_from_both_build_cmake_layouts(tmp_path: Path) -> None:
    """5.1 sets -Werror=all and the standard in __build_set_lang_version; 5.5 -Werror in the specs."""
    v51 = tmp_path / "v51"
    (v51 / "tools" / "cmake").mkdir(parents=True)
    (v51 / "tools" / "cmake" / "build.cmake").write_text(
        "function(__build_set_default_build_specifications)\n"
        '    list(APPEND compile_definitions "_GNU_SOURCE")\n'
        '    list(APPEND compile_options     "-ffunction-sections"\n'
        "                                    # warning-related flags\n"
        '                                    "-Wall" "-Werror=all" "-Wextra" "-gdwarf-4" "-ggdb")\n'
        "endfunction()\n"
        "function(__build_set_lang_version)\n"
        '    if(NOT IDF_TARGET STREQUAL "linux")\n'
        "        set(c_std gnu17)\n        set(cxx_std gnu++2b)\n    endif()\n"
        "endfunction()\n"
    )
    options, defines = chk.idf_common_flags(v51)
    assert options == ["-ffunction-sections", "-Wall", "-Werror=all", "-Wextra", "-std=gnu++2b"]
    assert defines == ["-D_GNU_SOURCE"]
    v55 = tmp_path / "v55"
    (v55 / "tools" / "cmake").mkdir(parents=True)
    (v55 / "tools" / "cmake" / "build.cmake").write_text(
        "function(__build_set_default_build_specifications)\n"
        '    list(APPEND compile_options "-Wall" "-Werror" "-Wno-error=extra")\n'
        '    if(NOT IDF_TARGET STREQUAL "linux")\n'
        '        list(APPEND c_compile_options   "-std=gnu17")\n'
        '        list(APPEND cxx_compile_options "-std=gnu++2b")\n'
        "    endif()\nendfunction()\n"
    )
    options, _ = chk.idf_common_flags(v55)
    assert options == ["-Wall", "-Werror", "-Wno-error=extra", "-std=gnu++2b"]


def test_newlib_checkout_gets_its_configuration_header(tmp_path: Path) -> None:
    include = tmp_path / "newlib" / "libc" / "include"
    (include / "sys").mkdir(parents=True)
    (include / "sys" / "reent.h").write_text("")
    (include / "newlib.h").write_text("/* dummy file for external tools to use. */\n")
    (tmp_path / "newlib" / "acinclude.m4").write_text(
        "AC_DEFUN([DEF_NEWLIB_MAJOR_VERSION],m4_define([NEWLIB_MAJOR_VERSION],[4]))\n"
        "AC_DEFUN([DEF_NEWLIB_MINOR_VERSION],m4_define([NEWLIB_MINOR_VERSION],[1]))\n"
        "AC_DEFUN([DEF_NEWLIB_PATCHLEVEL_VERSION],m4_define([NEWLIB_PATCHLEVEL_VERSION],[0]))\n"
    )
    sources = chk.Sources(tmp_path, tmp_path, tmp_path)
    assert sources.newlib_include == include
    headers = chk.newlib_config_headers(sources)
    assert '#define _NEWLIB_VERSION "4.1.0"' in headers["_newlib_version.h"]
    assert "#define _WANT_IO_C99_FORMATS 1" in headers["newlib.h"]
    assert chk.newlib_version(sources) == "4.1.0"
    # A toolchain's include directory has the real header: nothing is written.
    (include / "newlib.h").write_text("#define _WANT_IO_C99_FORMATS 1\n")
    assert chk.newlib_config_headers(sources) == {}


def test_defaults_that_did_not_apply_are_reported(tmp_path: Path) -> None:
    defaults = tmp_path / "sdkconfig.defaults"
    defaults.write_text('# comment\nCONFIG_A=y\nCONFIG_B=n\nCONFIG_C="x"\nCONFIG_TYPO=y\nCONFIG_D=4096\n')
    sdkconfig = tmp_path / "sdkconfig"
    sdkconfig.write_text('CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C="x"\nCONFIG_D=8192\n')
    assert chk.defaults_not_applied(defaults, sdkconfig) == [
        "sdkconfig.defaults: CONFIG_TYPO is not an option of this ESP-IDF version",
        "sdkconfig.defaults: CONFIG_D=4096 did not apply (the sdkconfig has 8192)",
    ]


def _fake_idf(root: Path, *, espressif_mbedtls: bool) -> Path:
    files = {
        "components/esp_common/include/esp_idf_version.h": "#define ESP_IDF_VERSION_MAJOR 5\n"
        "#define ESP_IDF_VERSION_MINOR 5\n#define ESP_IDF_VERSION_PATCH 3\n",
        "version.txt": "v5.5.3\n",
        "components/pthread/CMakeLists.txt": (
            'idf_build_set_property(COMPILE_DEFINITIONS "_POSIX_READER_WRITER_LOCKS" APPEND)\n'
        ),
        "components/soc/CMakeLists.txt": "target_compile_definitions(${COMPONENT_LIB} INTERFACE "
        "SOC_MMU_PAGE_SIZE=CONFIG_MMU_PAGE_SIZE)\ntarget_compile_definitions(${COMPONENT_LIB} PRIVATE X=1)\n",
        "components/mbedtls/CMakeLists.txt": "foreach(target ${mbedtls_targets})\n"
        '    target_compile_definitions(${target} PUBLIC -DMBEDTLS_CONFIG_FILE="mbedtls/esp_config.h")\n'
        "endforeach()\n",
        "components/mbedtls/mbedtls/include/mbedtls/gcm.h": "typedef struct mbedtls_gcm_context_soft x;\n"
        if espressif_mbedtls
        else "typedef struct mbedtls_gcm_context x;\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize("fork", [True, False], ids=["espressif-mbedtls", "upstream-mbedtls"])
def test_definitions_of_the_real_build_are_read_where_esp_idf_sets_them(tmp_path: Path, fork: bool) -> None:
    """ESP_PLATFORM, IDF_VER, the build-wide and INTERFACE definitions; MBEDTLS_CONFIG_FILE only for
    a component that requires mbedtls and only with Espressif's fork (else the stand-in is named)."""
    idf = _fake_idf(tmp_path / "idf", espressif_mbedtls=fork)
    sources = chk.Sources(idf, tmp_path, tmp_path)
    plain, notes = chk.build_definitions(sources, {"nvs_flash"})
    assert (
        plain
        == [
            "-DESP_PLATFORM",
            '-DIDF_VER="v5.5.3"',
            "-D_POSIX_READER_WRITER_LOCKS",
            "-DSOC_MMU_PAGE_SIZE=CONFIG_MMU_PAGE_SIZE",
        ]
        and notes == []
    )
    with_tls, notes = chk.build_definitions(sources, {"mbedtls"})
    if fork:
        assert with_tls == [*plain, '-DMBEDTLS_CONFIG_FILE="mbedtls/esp_config.h"'] and notes == []
    else:
        assert with_tls == plain
        assert len(notes) == 1 and "not Espressif's fork" in notes[0] and "MBEDTLS_CONFIG_FILE" in notes[0]


def test_definitions_from_a_real_configure(tmp_path: Path) -> None:
    app = tmp_path / "project" / "src"
    (app / "port").mkdir(parents=True)
    db = tmp_path / "compile_commands.json"
    db.write_text(
        json.dumps(
            [
                {"file": str(tmp_path / "idf" / "x.c"), "command": "gcc -DOTHER=1 -c x.c"},
                {
                    "file": str(app / "port" / "a.cpp"),
                    "command": 'g++ -DESP_PLATFORM -DIDF_VER=\\"v5.5.3\\" -Iinc '
                    "-DSOC_MMU_PAGE_SIZE=CONFIG_MMU_PAGE_SIZE -c a.cpp",
                },
            ]
        ),
        encoding="utf-8",
    )
    assert chk.compile_commands_definitions(db, app) == [
        "-DESP_PLATFORM",
        '-DIDF_VER="v5.5.3"',
        "-DSOC_MMU_PAGE_SIZE=CONFIG_MMU_PAGE_SIZE",
    ]
    with pytest.raises(chk.CheckSetupError, match="no source of .* configure the same generated project"):
        chk.compile_commands_definitions(db, tmp_path / "elsewhere")


def test_missing_checkouts_are_named(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in chk.ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    assert chk.Sources.from_env({chk.ENV_IDF: "/x", chk.ENV_PROTOCOLS: "/y"}) is None
    with pytest.raises(SystemExit):
        chk.main(["--idf", "/x"])
    err = capsys.readouterr().err
    assert all(name in err for name in chk.ENV_NAMES)
    with pytest.raises(chk.CheckSetupError, match=chk.ENV_IDF):
        chk.Sources(Path("/nonexistent"), Path("/nonexistent"), Path("/nonexistent")).validate()


# ---------------------------------------------------------------------------- with the checkouts


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_generated_project_compiles_against_esp_idf(board: str, tmp_path: Path) -> None:
    sources = _sources()
    results = chk.run_check([TOOLSPEC / "default_device.yaml"], sources, [board], tmp_path, log=_quiet)
    assert [r.full for r in results] == [False, True]
    src = tmp_path / "default_device" / "firmware" / "platformio" / "src"
    for result in results:
        compiled = {chk.source_label(src.parent, f.source) for f in result.files}
        assert {
            "port/mcpgen_esp_port.cpp",
            "generated/mcp_tools.cpp",
            "port/transport_websocket.cpp",
            "mcpgen/session.cpp",
            "mcpgen/mcp_server.cpp",
        } <= compiled
        # The handlers are compiled where they are, beside the spec (src/handlers.cmake).
        assert (TOOLSPEC / "default_device_handlers.cpp").as_posix() in compiled
        failures = [f"{f.source}:\n{f.output}" for f in result.files if not f.ok]
        assert not failures, f"ESP-IDF {result.idf}, {board}:\n" + "\n".join(failures)
        assert not result.config_problems  # every sdkconfig.defaults line applied, WS_TRANSPORT on


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_mqtt_variant_compiles_against_esp_idf(board: str, tmp_path: Path) -> None:
    """The MQTT transport (esp-mqtt, MQTT 5 properties) with TLS, a login and a CA of its own."""
    sources = _sources()
    results = chk.run_check(
        [TOOLSPEC / "default_device.yaml"], sources, [board], tmp_path, log=_quiet, transports=("mqtt",)
    )
    assert [r.full for r in results] == [False, True]
    work = tmp_path / "default_device-mqtt"
    header = (work / chk.CHIPS[board].name / "config" / "sdkconfig.h").read_text()
    for line in (
        "#define CONFIG_MCPGEN_TRANSPORT_MQTT 1",
        "#define CONFIG_MQTT_PROTOCOL_5 1",
        '#define CONFIG_MCPGEN_MQTT_TOPIC_PREFIX "site/7"',
    ):
        assert line in header.splitlines(), line
    src = work / "firmware" / "platformio" / "src"
    for result in results:
        compiled = {chk.source_label(src.parent, f.source) for f in result.files}
        assert {
            "port/mcpgen_esp_port.cpp",
            "port/transport_mqtt.cpp",
            "port/transport_websocket.cpp",
            (TOOLSPEC / "default_device_handlers.cpp").as_posix(),
        } <= compiled
        failures = [f"{f.source}:\n{f.output}" for f in result.files if not f.ok]
        assert not failures, f"ESP-IDF {result.idf}, {board}:\n" + "\n".join(failures)
        assert not result.config_problems


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_serial_variants_compile_against_esp_idf(board: str, tmp_path: Path) -> None:
    """The serial transport on UART0 (every chip) and on USB-Serial-JTAG (the chips that have it)."""
    sources = _sources()
    results = chk.run_check(
        [TOOLSPEC / "default_device.yaml"],
        sources,
        [board],
        tmp_path,
        log=_quiet,
        full=False,
        transports=("serial", "serial-usb"),
    )
    usb = chk.CHIPS[board].name in chk.SERIAL_USB_CHIPS
    assert len(results) == (2 if usb else 1)
    for variant, port_line in (
        ("serial", "CONFIG_MCPGEN_SERIAL_UART0"),
        ("serial-usb", "CONFIG_MCPGEN_SERIAL_USB_SERIAL_JTAG"),
    ):
        if variant == "serial-usb" and not usb:
            continue
        header = tmp_path / f"default_device-{variant}" / chk.CHIPS[board].name / "config" / "sdkconfig.h"
        lines = header.read_text().splitlines()
        assert "#define CONFIG_MCPGEN_TRANSPORT_SERIAL 1" in lines and f"#define {port_line} 1" in lines
    for result in results:
        assert "transport_serial.cpp" in {f.source.name for f in result.files}
        failures = [f"{f.source}:\n{f.output}" for f in result.files if not f.ok]
        assert not failures, f"ESP-IDF {result.idf}, {board}:\n" + "\n".join(failures)
        assert not result.config_problems


def test_mqtt_variant_is_really_compiled(tmp_path: Path) -> None:
    """A wrong esp-mqtt call fails the MQTT build (the transport is not preprocessed away), and
    the same file is empty in the WebSocket build."""
    sources = _sources()
    project = generate_project(
        TOOLSPEC / "desk_lamp.yaml", tmp_path / "p", log=_quiet, environ=chk.check_config("mqtt", tmp_path)
    )
    transport = project / "src" / "port" / "transport_mqtt.cpp"
    text = transport.read_text()
    call = "esp_mqtt5_client_set_publish_property(g_client, &g_props)"
    assert call in text
    transport.write_text(text.replace(call, "esp_mqtt5_client_set_publish_property(&g_props)"))
    result = chk.check_project(project, sources, "esp32s3", tmp_path / "work", log=_quiet)
    bad = {f.source.name: f for f in result.files if not f.ok}
    assert set(bad) == {"transport_mqtt.cpp"}
    assert "esp_mqtt5_client_set_publish_property" in bad["transport_mqtt.cpp"].output
    assert chk.requirement_problems(project, sources, chk.CHIPS["esp32s3"]) == []


def test_serial_variant_is_really_compiled(tmp_path: Path) -> None:
    """A wrong UART driver call fails the serial build (the transport is not preprocessed away),
    and the USB-Serial-JTAG branch is compiled in its own build."""
    sources = _sources()
    for variant, call, wrong, board in (
        ("serial", "uart_param_config(kUart, &cfg)", "uart_param_config(&cfg)", "esp32"),
        (
            "serial-usb",
            "usb_serial_jtag_driver_install(&cfg)",
            "usb_serial_jtag_driver_install(cfg)",
            "esp32c3",
        ),
    ):
        project = generate_project(
            TOOLSPEC / "desk_lamp.yaml",
            tmp_path / variant,
            log=_quiet,
            environ=chk.check_config(variant, tmp_path),
        )
        transport = project / "src" / "port" / "transport_serial.cpp"
        text = transport.read_text()
        assert call in text
        transport.write_text(text.replace(call, wrong))
        result = chk.check_project(project, sources, board, tmp_path / f"work-{variant}", log=_quiet)
        bad = {f.source.name: f for f in result.files if not f.ok}
        assert set(bad) == {"transport_serial.cpp"}, variant
        assert wrong.split("(")[0] in bad["transport_serial.cpp"].output
        assert chk.requirement_problems(project, sources, chk.CHIPS[board]) == []


def test_check_catches_wrong_api_use_and_target_format_types(tmp_path: Path) -> None:
    """A missing argument of an esp_websocket_client call and a %u for a TickType_t (a long on
    the ESP toolchains, an int on a plain host build) both fail."""
    sources = _sources()
    project = generate_project(
        TOOLSPEC / "desk_lamp.yaml", tmp_path / "p", log=_quiet, environ=dict(chk.CHECK_CONFIG)
    )
    transport = project / "src" / "port" / "transport_websocket.cpp"
    text = transport.read_text()
    call = "esp_websocket_client_send_text(g_ws, data, static_cast<int>(len), pdMS_TO_TICKS(5000))"
    assert call in text
    short = "esp_websocket_client_send_text(g_ws, data, static_cast<int>(len))"
    transport.write_text(text.replace(call, short))
    port = project / "src" / "port" / "mcpgen_esp_port.cpp"
    # printf, not ESP_LOGI: in ESP-IDF 5.5 esp_log() carries no format attribute.
    probe = '\nvoid mcpgen_check_probe() { printf("tick %u", xTaskGetTickCount()); }\n'
    port.write_text(port.read_text() + probe)
    result = chk.check_project(project, sources, "esp32c3", tmp_path / "work", log=_quiet)
    bad = {f.source.name: f for f in result.files if not f.ok}
    assert set(bad) == {"mcpgen_esp_port.cpp", "transport_websocket.cpp"}
    out = bad["transport_websocket.cpp"].output
    assert "too few arguments" in out and "esp_websocket_client_send_text" in out
    out = bad["mcpgen_esp_port.cpp"].output
    assert "format '%u' expects argument of type 'unsigned int'" in out.replace("‘", "'").replace("’", "'")
    assert "long unsigned int" in out


def test_too_long_wifi_settings_fail_with_the_variable_named(tmp_path: Path) -> None:
    """A 33-byte SSID cannot be joined: the build stops with the variable's name; the 32-byte
    SSID and 64-byte key of CHECK_CONFIG (the limits) compile, see the test above."""
    sources = _sources()
    config = dict(chk.CHECK_CONFIG, MCPGEN_WIFI_SSID="s" * 33)
    project = generate_project(TOOLSPEC / "desk_lamp.yaml", tmp_path / "p", log=_quiet, environ=config)
    result = chk.check_project(project, sources, "esp32", tmp_path / "work", log=_quiet)
    bad = [f for f in result.files if not f.ok]
    assert [f.source.name for f in bad] == ["mcpgen_esp_port.cpp"]
    message = "MCPGEN_WIFI_SSID (CONFIG_MCPGEN_WIFI_SSID) is longer than a Wi-Fi SSID (32 bytes)"
    assert message in bad[0].output
    assert not result.config_problems


def test_api_listing_covers_every_call_and_field_of_the_port(tmp_path: Path) -> None:
    """`--api` lists the declaration of every ESP-IDF call and field the port uses (diffing two
    versions' listings is how docs/firmware.md's comparison was made)."""
    sources = _sources()
    project = generate_project(
        TOOLSPEC / "desk_lamp.yaml", tmp_path / "p", log=_quiet, environ=dict(chk.CHECK_CONFIG)
    )
    api = chk.port_api(project, sources, "esp32c3", tmp_path / "work")
    port = project / "src" / "port"
    called = {
        name
        for source in (port / "mcpgen_esp_port.cpp", port / "transport_websocket.cpp")
        for name in chk.API_CALL.findall(source.read_text())
    }
    assert called <= set(api) and len(called) > 30
    assert not [name for name, decl in api.items() if decl == "(not found)"]
    assert api["esp_websocket_client_send_text"].startswith("int esp_websocket_client_send_text(")
    assert "TickType_t" in api["esp_websocket_client_send_text"]
    assert api["xQueueSend"].startswith("#define xQueueSend(")
    assert api["wifi_sta_config_t.ssid"] == "uint8_t ssid[32]"


def test_api_listing_of_the_serial_transport(tmp_path: Path) -> None:
    """The UART and USB-Serial-JTAG driver calls and fields are listed in their builds."""
    sources = _sources()
    for variant, names in (
        ("serial", ("uart_read_bytes", "uart_write_bytes", "uart_config_t.source_clk")),
        (
            "serial-usb",
            (
                "usb_serial_jtag_read_bytes",
                "usb_serial_jtag_write_bytes",
                "usb_serial_jtag_driver_config_t.rx_buffer_size",
            ),
        ),
    ):
        project = generate_project(
            TOOLSPEC / "desk_lamp.yaml",
            tmp_path / variant,
            log=_quiet,
            environ=chk.check_config(variant, tmp_path),
        )
        api = chk.port_api(project, sources, "esp32c3", tmp_path / f"work-{variant}")
        assert not [name for name, decl in api.items() if decl == "(not found)"], variant
        for name in names:
            assert name in api and api[name] != "(not found)", (variant, name)
        assert "esp_log_set_vprintf" in api
        # no Wi-Fi in a serial build: the port's Wi-Fi code and its requirement are the network transports'
        assert not [name for name in api if "wifi" in name], variant


def test_api_listing_follows_transport_and_ota(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--api` lists the build asked for (it listed the WebSocket build's for every transport)."""
    _sources()
    listings = {}
    for args in (
        ["--transport", "serial"],
        ["--transport", "mqtt"],
        ["--transport", "websocket"],
        ["--transport", "websocket", "--ota"],
    ):
        assert chk.main(["--api", "--board", "esp32c3", "--keep", str(tmp_path / "_".join(args)), *args]) == 0
        out = capsys.readouterr().out
        head, *lines = out.splitlines()
        stem = "default_device_ota" if "--ota" in args else "default_device"
        assert head.startswith(f"# {stem}.yaml, transport {args[1]}")
        listings[" ".join(args)] = {line.split(":", 1)[0] for line in lines}
    serial, mqtt, ws, ota = listings.values()
    assert "uart_write_bytes" in serial and not [n for n in serial if "wifi" in n or "websocket" in n]
    assert "esp_mqtt_client_publish" in mqtt and "esp_wifi_start" in mqtt and "uart_write_bytes" not in mqtt
    assert "esp_websocket_client_send_text" in ws and not [n for n in ws if "mqtt" in n or "ota" in n]
    assert ws < ota and "esp_https_ota_begin" in ota


def test_headers_of_components_the_port_does_not_require_are_reported(tmp_path: Path) -> None:
    """The check's include path is wider than what ESP-IDF gives the app component: a header
    from a component missing in PRIV_REQUIRES (or idf_component.yml) is reported by name."""
    sources = _sources()
    project = generate_project(
        TOOLSPEC / "desk_lamp.yaml", tmp_path / "p", log=_quiet, environ=dict(chk.CHECK_CONFIG)
    )
    chip = chk.CHIPS["esp32s3"]
    assert chk.requirement_problems(project, sources, chip) == []
    cmake = project / "src" / "CMakeLists.txt"
    cmake.write_text(cmake.read_text().replace(" nvs_flash", ""))
    manifest = project / "src" / "idf_component.yml"
    manifest.write_text(manifest.read_text().replace("espressif/esp_websocket_client", "espressif/other"))
    problems = chk.requirement_problems(project, sources, chip)
    port = "src/port/mcpgen_esp_port.cpp"
    assert sorted(problems) == sorted(
        [
            'src/port/transport_websocket.cpp: #include "esp_websocket_client.h" is in component '
            "esp_websocket_client, which src/CMakeLists.txt does not require: "
            "add espressif/esp_websocket_client to src/idf_component.yml",
            f'{port}: #include "nvs.h" is in component nvs_flash, which src/CMakeLists.txt does not require: '
            "add it to PRIV_REQUIRES",
            f'{port}: #include "nvs_flash.h" is in component nvs_flash, which src/CMakeLists.txt does not '
            "require: add it to PRIV_REQUIRES",
        ]
    )


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_ota_variant_compiles_against_esp_idf(board: str, tmp_path: Path) -> None:
    """device.ota: the update handler (esp_https_ota, app rollback) on both transports, with
    the sdkconfig lines of rollback applied as written."""
    sources = _sources()
    spec = chk.ota_variant(TOOLSPEC / "desk_lamp.yaml", tmp_path / "specs")
    results = chk.run_check([spec], sources, [board], tmp_path, log=_quiet, transports=("websocket", "mqtt"))
    assert len(results) == 4
    header = (tmp_path / "desk_lamp_ota" / chk.CHIPS[board].name / "config" / "sdkconfig.h").read_text()
    for line in (
        "#define CONFIG_BOOTLOADER_APP_ROLLBACK_ENABLE 1",
        '#define CONFIG_APP_PROJECT_VER "0.3.1"',
        "#define CONFIG_ESP_HTTPS_OTA_ALLOW_HTTP 1",
    ):
        assert line in header.splitlines(), line
    for result in results:
        compiled = {f.source.name for f in result.files}
        assert {"mcpgen_esp_ota.cpp", "mcpgen_esp_port.cpp", "desk_lamp_ota_handlers.cpp"} <= compiled
        failures = [f"{f.source}:\n{f.output}" for f in result.files if not f.ok]
        assert not failures, f"ESP-IDF {result.idf}, {board}:\n" + "\n".join(failures)
        assert not result.config_problems


def test_ota_handler_is_really_compiled(tmp_path: Path) -> None:
    """A wrong esp_https_ota call fails an OTA project; the same file is empty without ota."""
    sources = _sources()
    spec = chk.ota_variant(TOOLSPEC / "desk_lamp.yaml", tmp_path / "specs")
    for name, path in (("ota", spec), ("plain", TOOLSPEC / "desk_lamp.yaml")):
        project = generate_project(path, tmp_path / name, log=_quiet, environ=dict(chk.CHECK_CONFIG))
        port = project / "src" / "port" / "mcpgen_esp_ota.cpp"
        text = port.read_text()
        call = "esp_https_ota_get_img_desc(ota, &desc)"
        assert call in text
        port.write_text(text.replace(call, "esp_https_ota_get_img_desc(&desc)"))
        result = chk.check_project(project, sources, "esp32c3", tmp_path / f"work-{name}", log=_quiet)
        bad = {f.source.name: f for f in result.files if not f.ok}
        if name == "ota":
            assert set(bad) == {"mcpgen_esp_ota.cpp"}
            assert "esp_https_ota_get_img_desc" in bad["mcpgen_esp_ota.cpp"].output
        else:
            assert bad == {}
        assert chk.requirement_problems(project, sources, chk.CHIPS["esp32c3"]) == []

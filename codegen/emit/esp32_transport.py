"""The transport of a generated ESP32 project: WebSocket (the default), MQTT 5 or serial.

The esp32 targets take their device settings from ``MCPGEN_*`` environment variables at
generation time (``CONFIG_ENV`` in ``emit/esp32.py``); the transport is one more of them:

* ``MCPGEN_TRANSPORT`` = ``websocket``, ``mqtt`` or ``serial``; unset, it follows the scheme
  of ``MCPGEN_BACKEND_URL`` (``mqtt://`` / ``mqtts://`` mean MQTT);
* with serial (MCP over the USB cable, no Wi-Fi; ``MCPGEN_BACKEND_URL`` is not used):
  ``MCPGEN_SERIAL_PORT`` (``uart0`` or ``usb_serial_jtag``; unset, the console's port) and
  ``MCPGEN_SERIAL_BAUD`` (UART0's speed, default 115200);
* with MQTT: ``MCPGEN_MQTT_USERNAME``, ``MCPGEN_MQTT_PASSWORD``, ``MCPGEN_MQTT_TOPIC_PREFIX``,
  ``MCPGEN_MQTT_DEVICE_ID`` (Kconfig strings, like the WebSocket settings),
  ``MCPGEN_MQTT_HELLO`` (``y``/``n``: ``n`` is the hello-less mode) and
  ``MCPGEN_MQTT_CA_FILE`` (a PEM file: the broker's CA, embedded in the firmware as
  ``src/port/mqtt_ca_pem.h``; without it ``mqtts://`` is checked against the public
  CA bundle).

They become lines of ``sdkconfig.defaults`` (the Kconfig choice ``MCPGEN_TRANSPORT`` of
``ports/esp_idf/Kconfig.projbuild``, which also selects ``MQTT_PROTOCOL_5``).

The transport (and ``device.ota``) also decide the components the application component
requires (``component_requirements``, written into ``src/CMakeLists.txt``) and the
dependencies of ``src/idf_component.yml`` (``component_manifest``): ESP-IDF resolves
requirements before it reads the sdkconfig, so they cannot follow the Kconfig choice, and a
serial device must not link Wi-Fi, lwIP, mbedTLS or the HTTP client it never uses.

Pure, as all of ``emit/``: ``targets/esp32.py`` reads the CA file, and reads and writes an
existing ``sdkconfig`` (``with_choice`` says what its text becomes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from mcpgen.codegen.errors import BuildError

TRANSPORTS = ("websocket", "mqtt", "serial")
SERIAL_PORTS = {"uart0": "UART0", "usb_serial_jtag": "USB_SERIAL_JTAG"}

# MQTT string settings: environment variable -> (Kconfig symbol, secret?).
MQTT_ENV: dict[str, tuple[str, bool]] = {
    "MCPGEN_MQTT_USERNAME": ("CONFIG_MCPGEN_MQTT_USERNAME", False),
    "MCPGEN_MQTT_PASSWORD": ("CONFIG_MCPGEN_MQTT_PASSWORD", True),
    "MCPGEN_MQTT_TOPIC_PREFIX": ("CONFIG_MCPGEN_MQTT_TOPIC_PREFIX", False),
    "MCPGEN_MQTT_DEVICE_ID": ("CONFIG_MCPGEN_MQTT_DEVICE_ID", False),
}
_CHOICE = re.compile(r"^(# )?CONFIG_MCPGEN_TRANSPORT_(WEBSOCKET|MQTT|SERIAL)[= ].*\n?", re.MULTILINE)


# ESP-IDF components each part of the port includes headers of, beyond the common ones every
# component gets (freertos, esp_hw_support, esp_system, log, ...): (component, why).
_REQUIRES_ALWAYS: tuple[tuple[str, str], ...] = ()  # nvs_flash is in the port's CMakeLists.txt
_REQUIRES_WIFI = (
    ("esp_wifi", "the Wi-Fi station"),
    ("esp_netif", "its network interface"),
    ("esp_event", "Wi-Fi and IP events"),
)
REQUIRES: dict[str, tuple[tuple[str, str], ...]] = {
    "websocket": (*_REQUIRES_WIFI, ("mbedtls", "esp_crt_bundle_attach for wss://")),
    "mqtt": (
        *_REQUIRES_WIFI,
        ("mqtt", "esp-mqtt: ESP-IDF's up to 5.5, the registry's from 6.0"),
        ("mbedtls", "esp_crt_bundle_attach for mqtts://"),
        ("tcp_transport", "esp_transport.h: TCP_NODELAY on the broker socket"),
        ("lwip", "lwip/sockets.h"),
    ),
    # Both drivers: the port is chosen in Kconfig (the console's by default), after requirements.
    "serial": (
        ("esp_driver_uart", "driver/uart.h, MCPGEN_SERIAL_UART0"),
        ("esp_driver_usb_serial_jtag", "driver/usb_serial_jtag.h, MCPGEN_SERIAL_USB_SERIAL_JTAG"),
    ),
}
REQUIRES_OTA: tuple[tuple[str, str], ...] = (
    ("esp_https_ota", "the download"),
    ("esp_http_client", "its HTTP client"),
    ("app_update", "esp_ota_ops.h: slots and rollback"),
    ("bootloader_support", "the image checks"),
    ("esp_app_format", "esp_app_desc_t"),
    ("esp_partition", "the slots"),
    ("esp_timer", "the rollback deadline and the reboot"),
    ("mbedtls", "SHA-256 of the image"),
)
# The first ESP-IDF release with every component a transport requires (its git tags):
# esp_driver_uart and esp_driver_usb_serial_jtag were split out of `driver` in v5.3; the
# network transports' components and OTA's all exist in v5.1, the oldest release mcpgen
# supports. ESP-IDF's own configure of the generated project agrees for 5.1.0 to 5.5.5
# (scripts/configure_esp_idf.sh; docs/firmware.md, "Which ESP-IDF releases configure the
# project"): 5.1.x and 5.2.x stop the serial project at esp_driver_uart.
MIN_IDF: dict[str, str] = {"websocket": "5.1", "mqtt": "5.1", "serial": "5.3"}


def component_requirements(transport: str, ota: bool) -> list[tuple[str, str]]:
    """(component, why) the generated app component requires besides ``nvs_flash``, each once."""
    chosen: list[tuple[str, str]] = []
    for name, why in (*_REQUIRES_ALWAYS, *REQUIRES[transport], *(REQUIRES_OTA if ota else ())):
        if name not in (n for n, _ in chosen):
            chosen.append((name, why))
    return chosen


def requires_lines(transport: str, ota: bool) -> str:
    """The PRIV_REQUIRES continuation lines of ``src/CMakeLists.txt`` (no parentheses in the
    comments: the project's own readers of the call stop at the first ``)``)."""
    label = f"the {transport} transport"
    lines = []
    for name, why in component_requirements(transport, ota):
        owner = (
            "device.ota"
            if ota and name in dict(REQUIRES_OTA) and name not in dict(REQUIRES[transport])
            else label
        )
        lines.append(f"                  {name}  # {owner}: {why}")
    return "\n".join(lines) if lines else "                  # no other component"


def component_manifest(template: str, transport: str) -> str:
    """``src/idf_component.yml`` for ``transport`` from the port's manifest (which lists every
    dependency of every transport): ``idf`` becomes the first ESP-IDF release that has the
    transport's components, and only the registry components it uses are kept, each with
    the comment lines above it."""
    keep = {"websocket": {"espressif/esp_websocket_client"}, "mqtt": {"espressif/mqtt"}, "serial": set()}[
        transport
    ]
    head: list[str] = []
    blocks: list[tuple[str, list[str]]] = []  # (dependency, its comment and entry lines)
    pending: list[str] = []
    in_deps = False
    for line in template.splitlines():
        if line.startswith("dependencies:"):
            in_deps = True
            head.append(line)
        elif not in_deps:
            head.append(line)
        elif re.match(r"^  #", line) or not line.strip():
            pending.append(line)
        elif re.match(r"^  \S", line):
            blocks.append((line.split(":", 1)[0].strip(), [*pending, line]))
            pending = []
        elif blocks:  # an indented continuation of the entry above
            blocks[-1][1].append(line)
    body = [
        f'  idf: ">={MIN_IDF[transport]}"  # the first release with every component the '
        f"{transport} transport requires"
    ]
    for name, lines in blocks:
        if name in keep:
            body += lines
    return "\n".join([*head, *body]) + "\n"


def transport_of(env: Mapping[str, str]) -> str:
    """``websocket``, ``mqtt`` or ``serial``, from ``MCPGEN_TRANSPORT`` or the scheme of
    ``MCPGEN_BACKEND_URL`` (which the serial transport does not use) in the build's settings
    (``targets.esp32.settings_environ``)."""
    url = env.get("MCPGEN_BACKEND_URL") or ""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    url_says = "mqtt" if scheme in ("mqtt", "mqtts") else ("websocket" if scheme in ("ws", "wss") else None)
    chosen = (env.get("MCPGEN_TRANSPORT") or "").strip().lower()
    if not chosen:
        return url_says or "websocket"
    if chosen not in TRANSPORTS:
        raise BuildError(
            f"MCPGEN_TRANSPORT={chosen!r}: expected one of {', '.join(TRANSPORTS)}\n"
            "  fix: export MCPGEN_TRANSPORT=mqtt (or websocket, or serial), or leave it unset "
            "to follow the scheme of MCPGEN_BACKEND_URL"
        )
    if chosen != "serial" and url_says is not None and url_says != chosen:
        want = "mqtt:// or mqtts://" if chosen == "mqtt" else "ws:// or wss://"
        raise BuildError(
            f"MCPGEN_TRANSPORT={chosen} but MCPGEN_BACKEND_URL={url!r} is a {url_says} URL\n"
            f"  fix: give a {want} URL, or change MCPGEN_TRANSPORT"
        )
    return chosen


def _bool(name: str, value: str | None, default: bool) -> bool:
    if value is None or value.strip() == "":
        return default
    v = value.strip().lower()
    if v in ("y", "yes", "1", "true", "on"):
        return True
    if v in ("n", "no", "0", "false", "off"):
        return False
    raise BuildError(f"{name}={value!r}: expected y or n")


def sdkconfig_lines(transport: str, env: Mapping[str, str], quote: Callable[[str], str]) -> list[str]:
    """The ``sdkconfig.defaults`` lines of the transport (``quote`` makes a Kconfig string)."""
    lines = [f"CONFIG_MCPGEN_TRANSPORT_{transport.upper()}=y"]
    if transport == "mqtt":
        for name, (symbol, _secret) in MQTT_ENV.items():
            lines.append(f"{symbol}={quote(env.get(name) or '')}")
        hello = _bool("MCPGEN_MQTT_HELLO", env.get("MCPGEN_MQTT_HELLO"), True)
        lines.append("CONFIG_MCPGEN_MQTT_HELLO=y" if hello else "# CONFIG_MCPGEN_MQTT_HELLO is not set")
    if transport == "serial":
        lines += _serial_lines(env)
    return lines


def _serial_lines(env: Mapping[str, str]) -> list[str]:
    """``MCPGEN_SERIAL_PORT`` / ``MCPGEN_SERIAL_BAUD`` as Kconfig lines (unset: Kconfig's defaults)."""
    lines = []
    port = (env.get("MCPGEN_SERIAL_PORT") or "").strip().lower()
    if port:
        if port not in SERIAL_PORTS:
            raise BuildError(
                f"MCPGEN_SERIAL_PORT={port!r}: expected one of {', '.join(SERIAL_PORTS)}\n"
                "  fix: export MCPGEN_SERIAL_PORT=uart0 (or usb_serial_jtag on an ESP32-C3/S3), "
                "or leave it unset for the console's port"
            )
        # Only the chosen line: the other option does not exist on every chip (no
        # USB-Serial-JTAG on the ESP32), and a choice needs no "is not set" lines.
        lines.append(f"CONFIG_MCPGEN_SERIAL_{SERIAL_PORTS[port]}=y")
    baud = (env.get("MCPGEN_SERIAL_BAUD") or "").strip()
    if baud:
        if not baud.isdigit() or not 1200 <= int(baud) <= 5_000_000:
            raise BuildError(f"MCPGEN_SERIAL_BAUD={baud!r}: expected a speed in baud, e.g. 115200 or 921600")
        lines.append(f"CONFIG_MCPGEN_SERIAL_BAUD={int(baud)}")
    return lines


def ca_header(pem: str = "", source: str = "") -> str:
    """``src/port/mqtt_ca_pem.h``: ``pem`` (the text of ``MCPGEN_MQTT_CA_FILE``, read and checked
    by ``targets/esp32.py``) as a C string; ``source``: that file's name ("" without one)."""
    body = "".join(f'    "{line}\\n"\n' for line in pem.splitlines() if line.strip())
    said = f"from {source}" if source else "none: MCPGEN_MQTT_CA_FILE was not set"
    return (
        "// Generated by codegen (esp32_transport.py): the MQTT broker's CA certificate for\n"
        f"// mqtts:// ({said}). Empty: the public CA bundle is used.\n"
        "#pragma once\n\n"
        "static const char kMcpgenMqttCaPem[] =\n" + (body if body else '    ""\n') + "    ;\n"
    )


def with_choice(text: str, transport: str) -> str:
    """``text`` of an existing ``sdkconfig.<env>`` with the transport choice set to ``transport``.

    The choice lines are rewritten where they are; a file without them (the default,
    WebSocket) gets them only when the transport is not the default.
    """

    def line(name: str) -> str:
        return (
            f"CONFIG_MCPGEN_TRANSPORT_{name}=y"
            if name == transport.upper()
            else f"# CONFIG_MCPGEN_TRANSPORT_{name} is not set"
        )

    if _CHOICE.search(text):
        new = _CHOICE.sub(lambda m: line(m.group(2)) + ("\n" if m.group(0).endswith("\n") else ""), text)
        chosen = line(transport.upper())
        if not re.search(rf"^{re.escape(chosen)}$", new, re.MULTILINE):  # a choice the file predates
            new += ("" if new.endswith("\n") else "\n") + chosen + "\n"
        return new
    if transport != "websocket":
        sep = "" if text.endswith("\n") or not text else "\n"
        return text + sep + "".join(f"{line(name.upper())}\n" for name in sorted(TRANSPORTS))
    return text

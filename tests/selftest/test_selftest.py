"""``codegen selftest`` against the host simulator (stdio and through a gateway) and against a
fake device that breaks one check at a time: the command passes on the real device core and
fails, naming the check, on each broken behaviour."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from device_testlib import DEFAULT_SPEC, LAMP_SPEC
from selftest_testlib import fake_cmd

from mcpgen.codegen.run.selftest import argument_sets, bad_arguments


def selftest(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["codegen", "selftest", *args], capture_output=True, text=True, timeout=timeout)


def as_json(*args: str) -> tuple[int, dict[str, Any]]:
    r = selftest(*args, "--format", "json", "--calls", "20")
    assert r.stdout, r.stderr
    return r.returncode, json.loads(r.stdout)


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["status"] for c in report["checks"]}


def failed(report: dict[str, Any]) -> list[str]:
    return [c["name"] for c in report["checks"] if c["status"] == "FAIL"]


# ------------------------------------------------------------------- the real device core


def test_default_simulator_passes_every_check_text(default_sim_exe: Path) -> None:
    r = selftest("--device-cmd", f"{default_sim_exe} --stdio", "--spec", str(DEFAULT_SPEC), "--calls", "20")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    for name in (
        "connect",
        "initialize",
        "version negotiation",
        "parse error",
        "invalid request",
        "method not found",
        "invalid params",
        "fingerprint",
        "tools/list",
        "tools/list paging",
        "call self.audio_speaker.set_volume",
        "refuse self.audio_speaker.set_volume",
        "latency",
    ):
        assert any(line.startswith(f"PASS {name}") for line in lines), (name, r.stdout)
    # the reboot is destructive: skipped unless asked for
    assert "SKIP call self.reboot: destructive (--call-destructive calls it)" in lines
    assert lines[-1].startswith("selftest passed: ")
    assert "FAIL" not in r.stdout


def test_lamp_simulator_resources_and_events(lamp_sim_exe: Path) -> None:
    # The lamp's fade takes up to its `seconds` maximum (30 s, past the 10 s call timeout):
    # a slow tool is skipped by name, as a board owner would (or give --timeout).
    code, report = as_json(
        "--device-cmd", f"{lamp_sim_exe} --stdio", "--spec", str(LAMP_SPEC), "--skip-tool", "self.light.fade"
    )
    assert code == 0, report
    st = statuses(report)
    assert st["resources"] == "PASS"
    assert st["events"] == "PASS"  # the lamp's handlers emit power_changed/button_pressed
    assert report["ok"] is True
    assert report["summary"]["failed"] == 0
    assert report["latency"]["calls"] == 20 and report["latency"]["p99_ms"] >= report["latency"]["p50_ms"]


def test_several_pages(paged_spec: Path, tmp_path: Path) -> None:
    from mcpgen.codegen.targets.host import build_host

    exe = build_host(paged_spec, tmp_path / "b", log=lambda _: None)
    code, report = as_json("--device-cmd", f"{exe} --stdio", "--spec", str(paged_spec))
    assert code == 0, report
    detail = next(c["detail"] for c in report["checks"] if c["name"] == "tools/list paging")
    assert int(detail.split(" page")[0]) >= 3


def test_without_spec_skips_what_needs_it(default_sim_exe: Path) -> None:
    code, report = as_json("--device-cmd", f"{default_sim_exe} --stdio", "--no-calls")
    assert code == 0, report
    st = statuses(report)
    assert st["fingerprint"] == "SKIP" and st["events"] == "SKIP"
    assert st["call self.counter.add"] == "SKIP"
    assert report["latency"]["method"] == "ping"  # --no-calls: no tool is timed either


def test_wrong_spec_fails_fingerprint_and_tools(default_sim_exe: Path) -> None:
    code, report = as_json(
        "--device-cmd", f"{default_sim_exe} --stdio", "--spec", str(LAMP_SPEC), "--no-calls"
    )
    assert code == 1
    assert {"fingerprint", "tools/list"} <= set(failed(report))


def test_through_a_gateway(default_sim_exe: Path) -> None:
    """--listen: the simulator connects over WebSocket as a board on Wi-Fi would."""
    proc = subprocess.Popen(
        ["codegen", "selftest", "--listen", "127.0.0.1:0", "--spec", str(DEFAULT_SPEC), "--calls", "20"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith("waiting for a device on port "), first
    port = int(first.split("port ")[1].split()[0])
    sim = subprocess.Popen(
        [str(default_sim_exe), "--ws", f"ws://127.0.0.1:{port}/"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        sim.kill()
        sim.wait()
    assert proc.returncode == 0, first + out + err
    assert "PASS connect: gateway ws://127.0.0.1:" in out
    assert "PASS parse error" in out and "PASS refuse self.counter.add" in out


def test_nobody_connects_to_the_gateway() -> None:
    r = selftest("--listen", "127.0.0.1:0", "--connect-timeout", "0.5")
    assert r.returncode == 1
    assert "FAIL connect: DeviceTimeout: no device ready within 0.5s" in r.stdout


def test_a_device_command_that_does_not_start(tmp_path: Path) -> None:
    r = selftest("--device-cmd", str(tmp_path / "nothing-here"))
    assert r.returncode == 1
    assert r.stdout.startswith("FAIL connect: FileNotFoundError")


# --------------------------------------------------------------- broken devices, one each

BROKEN = [
    ("parse-error-code", "parse error"),
    ("invalid-request-code", "invalid request"),
    ("method-not-found-code", "method not found"),
    ("invalid-params-code", "invalid params"),
    ("version", "version negotiation"),
    ("fingerprint", "fingerprint"),
    ("missing-tool", "tools/list"),
    ("schema-differs", "tools/list"),
    ("page-over-limit", "tools/list paging"),
    ("forged-cursor", "tools/list paging"),
    ("accepts-out-of-range", "refuse self.audio_speaker.set_volume"),
    ("refuses-in-range", "call self.audio_speaker.set_volume"),
    ("undeclared-event", "events"),
]


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``codegen selftest ARGS`` in this process (the fake device is the only subprocess)."""
    from mcpgen.codegen.cli import main

    code = main(["selftest", *args])
    return code, capsys.readouterr().out


def test_the_fake_device_passes_unbroken(paged_spec: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = in_process(
        capsys,
        "--device-cmd",
        fake_cmd(paged_spec),
        "--spec",
        str(paged_spec),
        "--format",
        "json",
        "--calls",
        "5",
    )
    report = json.loads(out)
    assert code == 0, failed(report)


@pytest.mark.parametrize(("broken", "check"), BROKEN)
def test_a_broken_device_fails_the_check(
    paged_spec: Path, broken: str, check: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = in_process(
        capsys, "--device-cmd", fake_cmd(paged_spec, broken), "--spec", str(paged_spec), "--calls", "5"
    )
    assert code == 1, out
    lines = out.splitlines()
    assert any(line.startswith(f"FAIL {check}: ") for line in lines), out
    assert lines[-1].startswith("selftest FAILED: ")


def test_failure_details_say_what_was_wrong(paged_spec: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def run(broken: str) -> str:
        return in_process(
            capsys, "--device-cmd", fake_cmd(paged_spec, broken), "--spec", str(paged_spec), "--calls", "1"
        )[1]

    assert "FAIL refuse self.audio_speaker.set_volume: volume=-1 (minimum 0) was accepted" in run(
        "accepts-out-of-range"
    )
    assert "FAIL tools/list: missing self.get_device_status" in run("missing-tool")
    wrong_code = "FAIL parse error: a line that is not JSON: error -32600, expected -32700"
    assert wrong_code in run("parse-error-code")


def test_skip_tool(default_sim_exe: Path) -> None:
    code, report = as_json(
        "--device-cmd",
        f"{default_sim_exe} --stdio",
        "--spec",
        str(DEFAULT_SPEC),
        "--skip-tool",
        "self.counter.add",
    )
    assert code == 0
    skipped = {c["name"]: c["detail"] for c in report["checks"] if c["status"] == "SKIP"}
    assert skipped["call self.counter.add"] == "--skip-tool"


# ------------------------------------------------------------------ values from schemas


def test_argument_sets_cover_bounds_and_enums() -> None:
    schema = {
        "type": "object",
        "properties": {
            "v": {"type": "integer", "minimum": 0, "maximum": 100},
            "t": {"type": "string", "enum": ["light", "dark", "auto"]},
            "h": {"type": "string", "maxLength": 32, "pattern": "^[a-z0-9-]+$"},
        },
    }
    sets = argument_sets(schema)
    assert sets is not None
    assert [s["v"] for s in sets] == [0, 100, 100]
    assert [s["t"] for s in sets] == ["light", "dark", "auto"]
    assert all(s["h"] in ("demo", "demo-device") for s in sets)
    bad = dict(bad_arguments(schema, sets[0]))
    assert bad["v=-1 (minimum 0)"]["v"] == -1
    assert bad["v=101 (maximum 100)"]["v"] == 101
    assert bad["h of 33 characters (maxLength 32)"]["h"] == "a" * 33
    assert bad['h="!!" (pattern ^[a-z0-9-]+$)']["h"] == "!!"
    assert "t=7 (a number, not a string)" in bad


def test_no_value_for_an_impossible_pattern() -> None:
    assert argument_sets({"properties": {"x": {"type": "string", "pattern": "^Q{3}$"}}}) is None


def test_cli_help_lists_selftest() -> None:
    r = subprocess.run(["codegen", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "selftest" in r.stdout


def test_port_auto_without_a_board_is_one_line() -> None:
    """--port auto finds the board as codegen run does; none here: one line, exit 1."""
    r = selftest("--port", "auto", "--format", "json")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("codegen: error: no ESP32 board found on USB")


def test_port_auto_names_the_board_on_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With one board found, its line goes to stderr so --format json stays JSON on stdout."""
    from mcpgen.codegen.run import ports
    from mcpgen.codegen.run import selftest as st

    class Port:
        device, vid, pid, description = "/dev/ttyUSB9", 0x10C4, 0xEA60, "CP2102"

    monkeypatch.setattr(ports, "list_serial_ports", lambda: [Port()])
    seen: list[str] = []
    monkeypatch.setattr(st, "main", lambda args, spec, print_line: seen.append(args.port) or 0)
    code, out = in_process(capsys, "--port", "auto", "--format", "json")
    assert code == 0 and seen == ["/dev/ttyUSB9"] and out == ""

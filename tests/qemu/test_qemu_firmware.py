"""The QEMU targets themselves (Cortex-M3 and RV32, each test once per target through the
``qemu_target`` fixture): build figures, the debug console, the stack guard, the runtime
over the UART, `codegen run`'s session, and build errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from qemu_uart_driver import DEFAULT_SPEC, LAMP_SPEC, QemuSim, copy_spec

from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.run.run_qemu import boot, run_qemu_session
from mcpgen.codegen.targets.qemu import build_qemu, memory_report
from mcpgen.codegen.targets.qemu_machines import QemuMachine, target_of_elf

pytestmark = pytest.mark.slow


def test_memory_report_matches_the_image(default_sim_exe: Path, qemu_target: QemuMachine) -> None:
    assert target_of_elf(default_sim_exe) is qemu_target
    report = memory_report(default_sim_exe)
    assert default_sim_exe.name == "xiaozhi_sim.elf"
    assert default_sim_exe.parent.name == qemu_target.build_subdir
    assert 10_000 < report.flash < 512 * 1024
    assert report.flash == report.text + report.data
    # Static RAM holds at least the request and response buffers of the port.
    assert report.ram == report.data + report.bss >= 4096 + 10240
    assert report.stack == 16 * 1024
    saved = json.loads((default_sim_exe.parent / "xiaozhi_sim.memory.json").read_text())
    assert saved["flash"] == report.flash and saved["ram"] == report.ram
    assert saved["target"] == qemu_target.name
    # The core's share of the linked image (from the map): most of the code, not all of it.
    core = saved["core"]
    assert 5_000 < core["text"] < report.text - 5_000
    assert core["data"] + core["bss"] < 1024  # the core's buffers belong to the port


def test_stack_overflow_faults_and_is_reported(qemu_toolchain: QemuMachine, tmp_path: Path) -> None:
    # 512 bytes is enough to boot but not for show_text (format_double needs ~1.5 KiB):
    # the overflow must stop the firmware with a report, never corrupt memory silently.
    spec = copy_spec(DEFAULT_SPEC, tmp_path / "spec")
    elf = build_qemu(spec, tmp_path / "out", target=qemu_toolchain, stack_size=512, log=lambda _: None)
    sim = QemuSim(elf, tmp_path)
    try:
        assert "stack 512 " in sim.stderr()
        call = {"name": "self.display.show_text", "arguments": {"text": "hi", "seconds": 1.5}}
        sim.send_line(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}))
        console = sim.device.wait_for_log("FAULT")
        assert sim.no_line(0.3), "no reply may come out of a faulted firmware"
        assert sim.device.running, "the firmware halts; the emulator must not die"
    finally:
        sim.close()
    if qemu_toolchain.name == "qemu-riscv32":  # the PMP guard names the cause and address
        assert re.search(r"FAULT mcause 7 mepc 0x[0-9a-f]{8} mtval 0x[0-9a-f]{8} \(stack overflow\)", console)


def test_console_reports_stack_high_water_mark_and_mcp_uart_stays_clean(
    default_sim_exe: Path, tmp_path: Path
) -> None:
    sim = QemuSim(default_sim_exe, tmp_path)
    try:
        boot_log = sim.stderr()
        banner = r"mcpgen: boot xiaozhi-sim 1\.0\.0 fingerprint [0-9a-f]{16} tools 10 stack 16384"
        assert re.search(banner, boot_log)
        assert sim.no_line(0.5), "the firmware must not write anything unsolicited on the MCP UART"
        assert sim.request("ping")["result"] == {}
        after_ping = sim.device.stack_high_water()
        shown = sim.call_text("self.display.show_text", {"text": "hi", "seconds": 1.5})
        assert shown == 'showing "hi" for 1.5 s'
        sim.request("tools/list")
        hwm = sim.device.stack_high_water()
        assert after_ping is not None and hwm is not None
        assert 0 < after_ping <= hwm < sim.device.stack_size() == 16384
        report = r"mcpgen: msg (\d+) in (\d+) out (\d+) stack_hwm (\d+)/16384 heap (\d+)"
        lines = re.findall(report, sim.stderr())
        assert [int(n) for n, *_ in lines] == [1, 2, 3]
        assert all(int(out) > 0 for _, _, out, _, _ in lines)
    finally:
        sim.close()


async def test_runtime_connect_serial_over_the_uart(lamp_sim_exe: Path, tmp_path: Path) -> None:
    from mcpgen.codegen.spec.loader import load_spec
    from mcpgen.runtime import connect_serial

    spec = load_spec(LAMP_SPEC)
    with boot(lamp_sim_exe, workdir=tmp_path) as dev:
        device = await connect_serial(dev.url, fingerprint=spec.fingerprint, policy="strict")
        try:
            assert device.fingerprint == spec.fingerprint and not device.dynamic
            assert [t.name for t in device.tools] == [t.name for t in spec.tools]
            assert await device.call("self.light.set_rgb", {"r": 1, "g": 2, "b": 3}) is True
            state = await device.call("self.light.get_state")
            assert state["rgb"] == [1, 2, 3]
            assert await device.call("self.timer.set", {"minutes": 15}) == 15
        finally:
            await device.close()
        assert dev.running


def test_run_session_builds_boots_and_calls_every_tool(qemu_toolchain: QemuMachine, tmp_path: Path) -> None:
    spec = copy_spec(DEFAULT_SPEC, tmp_path / "spec")
    out: list[str] = []
    assert run_qemu_session(spec, tmp_path / "out", target=qemu_toolchain, log=out.append) == 0
    text = "\n".join(out)
    assert f"in {qemu_toolchain.qemu} -M {qemu_toolchain.machine}" in text
    assert "10 tools:" in text and "self.reboot  [user only]" in text
    assert 'call self.counter.add({"amount": 1}) -> 1' in text  # JSON, as host runs print
    assert "FAILED" not in text
    m = re.search(r"stack high-water mark: (\d+) of 16384 bytes", text)
    assert m and 0 < int(m.group(1)) < 16384


def test_compile_error_raises_build_error_with_compiler_output(
    qemu_toolchain: QemuMachine, tmp_path: Path
) -> None:
    spec = copy_spec(DEFAULT_SPEC, tmp_path / "spec")
    handlers = spec.with_name("default_device_handlers.cpp")
    handlers.write_text(handlers.read_text() + "\nint broken( { return 0; }\n")
    with pytest.raises(BuildError) as info:
        build_qemu(spec, tmp_path / "out", target=qemu_toolchain, log=lambda _: None)
    message = str(info.value)
    assert "default_device_handlers.cpp" in message and "error:" in message


def test_codegen_build_cli_builds_the_target(
    qemu_toolchain: QemuMachine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcpgen.codegen import cli

    spec = copy_spec(DEFAULT_SPEC, tmp_path / "spec")
    out = tmp_path / "out"
    assert cli.main(["build", str(spec), "--target", qemu_toolchain.name, "-o", str(out)]) == 0
    elf = out / "firmware" / qemu_toolchain.build_subdir / "xiaozhi_sim.elf"
    printed = capsys.readouterr().out
    assert f"for {qemu_toolchain.cpu} with {qemu_toolchain.toolchain.prefix}g++" in printed
    assert f"firmware: {elf}" in printed
    assert target_of_elf(elf) is qemu_toolchain

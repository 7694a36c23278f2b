"""Generated typed bindings: emission, build, import, validation, calls against a fake device."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import subprocess
import sys
import typing
from pathlib import Path
from types import ModuleType

import pytest
from runtime_fakes import DEFAULT_SPEC, LAMP_SPEC, FakeCore, FakeWsDevice

from mcpgen import runtime
from mcpgen.codegen.emit import python as emit_python
from mcpgen.codegen.emit.header import generated_header
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.model import DeviceSpec, Field, Param, Returns, Spec, Tool
from mcpgen.codegen.targets.python import build_bindings, import_bindings
from mcpgen.runtime import Gateway
from mcpgen.runtime.errors import SpecMismatch, ValidationError


@pytest.fixture(scope="session")
def bindings_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both example specs' bindings, compiled when the runtime is (else plain Python)."""
    out = tmp_path_factory.mktemp("bindings")
    build_bindings(DEFAULT_SPEC, out / "default", log=lambda s: None, compile=runtime.COMPILED)
    build_bindings(LAMP_SPEC, out / "lamp", log=lambda s: None, compile=False)
    return out


@pytest.fixture(scope="session")
def sim_mod(bindings_dir: Path) -> ModuleType:
    return import_bindings(bindings_dir / "default" / "python", "xiaozhi_sim_tools")


@pytest.fixture(scope="session")
def lamp_mod(bindings_dir: Path) -> ModuleType:
    return import_bindings(bindings_dir / "lamp" / "python", "desk_lamp_tools")


# -- emission --------------------------------------------------------------------------------


def test_emit_is_deterministic_and_every_file_has_the_header() -> None:
    spec = load_spec(DEFAULT_SPEC)
    a = emit_python.emit(spec)
    b = emit_python.emit(load_spec(DEFAULT_SPEC))
    assert a == b
    assert set(a) == {
        "python/setup.py",
        "python/pyproject.toml",
        "python/xiaozhi_sim_tools/__init__.py",
        "python/xiaozhi_sim_tools/_bindings.py",
        "python/xiaozhi_sim_tools/_bindings.pxd",
        "python/xiaozhi_sim_tools/_bindings.pyi",
        "python/xiaozhi_sim_tools/py.typed",
    }
    header = generated_header(spec, "#")
    for path, text in a.items():
        assert text.startswith(header), path


def test_generated_python_compiles_as_python() -> None:
    for spec_path in (DEFAULT_SPEC, LAMP_SPEC):
        for path, text in emit_python.emit(load_spec(spec_path)).items():
            if path.endswith((".py", ".pyi")):
                compile(text, path, "exec")


def test_build_is_incremental(tmp_path: Path) -> None:
    logs: list[str] = []
    build_bindings(LAMP_SPEC, tmp_path, log=logs.append, compile=False)
    build_bindings(LAMP_SPEC, tmp_path, log=logs.append, compile=False)
    assert "(0 changed)" in logs[-2]


# -- the generated module ---------------------------------------------------------------------


def test_module_constants_and_build_flavour(sim_mod: ModuleType) -> None:
    spec = load_spec(DEFAULT_SPEC)
    assert sim_mod.COMPILED == runtime.COMPILED
    cls = sim_mod.XiaozhiSim
    assert cls.FINGERPRINT == sim_mod.FINGERPRINT == spec.fingerprint
    assert list(cls.SPEC) == [t.name for t in spec.tools]
    entry = cls.SPEC["self.audio_speaker.set_volume"]
    assert entry["returns"] == "boolean" and entry["python_path"] == ("audio_speaker", "set_volume")
    assert entry["input_schema"]["properties"]["volume"] == {
        "type": "integer",
        "description": "Volume in percent.",
        "minimum": 0,
        "maximum": 100,
    }
    assert cls.SPEC["self.reboot"]["user_only"] is True


def test_signatures_are_keyword_only_with_spec_defaults(sim_mod: ModuleType) -> None:
    show = inspect.signature(sim_mod.DisplayTools.show_text)
    params = show.parameters
    assert [p for p in params if p != "self"] == ["scroll", "seconds", "text"]
    assert all(params[p].kind is inspect.Parameter.KEYWORD_ONLY for p in ("scroll", "seconds", "text"))
    assert params["seconds"].default == 3.0 and params["scroll"].default is False
    assert params["text"].default is inspect.Parameter.empty
    assert "Show a short message" in (sim_mod.DisplayTools.show_text.__doc__ or "")


async def test_a_tool_method_returns_a_coroutine_that_acts_only_when_awaited(
    sim_mod: ModuleType, gateway: Gateway, ws_url: str, fake_devices
) -> None:
    # Tool methods are plain functions returning the call's coroutine (no second coroutine
    # layer per call); they must still behave as async methods do.
    fake = FakeWsDevice(ws_url, "lazy")
    fake_devices.append(fake)
    await fake.start()
    device = await gateway.wait_for_device(timeout=5)
    sim = sim_mod.XiaozhiSim(device, policy="strict")
    before = len(fake.core.received)
    bad = sim.screen.set_theme(theme="blue")  # invalid: raises only when awaited
    good = sim.audio_speaker.set_volume(volume=7)
    assert asyncio.iscoroutine(bad) and asyncio.iscoroutine(good)
    await asyncio.sleep(0.05)
    assert len(fake.core.received) == before, "nothing is sent before the call is awaited"
    with pytest.raises(ValidationError) as err:
        await bad
    assert (err.value.argument, err.value.rule) == ("theme", "enum")
    assert await asyncio.create_task(good) is True  # a coroutine: create_task takes it
    sent = [m for m in fake.core.received[before:] if m.get("method") == "tools/call"]
    assert [m["params"]["name"] for m in sent] == ["self.audio_speaker.set_volume"]
    never = sim.audio_speaker.set_volume(volume=8)
    never.close()  # dropped before awaiting: nothing sent, no warning
    await asyncio.sleep(0.05)
    assert len([m for m in fake.core.received if m.get("method") == "tools/call"]) == len(sent) + (
        len([m for m in fake.core.received[:before] if m.get("method") == "tools/call"])
    )


@pytest.mark.parametrize(
    "fn, kwargs, argument, rule",
    [
        ("args_audio_speaker_set_volume", {"volume": 101}, "volume", "maximum"),
        ("args_audio_speaker_set_volume", {"volume": -1}, "volume", "minimum"),
        ("args_audio_speaker_set_volume", {"volume": True}, "volume", "type"),
        ("args_audio_speaker_set_volume", {"volume": 5.0}, "volume", "type"),
        ("args_audio_speaker_set_volume", {"volume": "5"}, "volume", "type"),
        ("args_display_show_text", {"scroll": False, "seconds": "3", "text": "x"}, "seconds", "type"),
        ("args_screen_set_theme", {"theme": None}, "theme", "type"),
        ("args_screen_set_theme", {"theme": "blue"}, "theme", "enum"),
        ("args_display_show_text", {"scroll": False, "seconds": 3.0, "text": "x" * 65}, "text", "maxLength"),
        ("args_display_show_text", {"scroll": 1, "seconds": 3.0, "text": "x"}, "scroll", "type"),
        ("args_display_show_text", {"scroll": False, "seconds": 0.1, "text": "x"}, "seconds", "minimum"),
        (
            "args_display_show_text",
            {"scroll": False, "seconds": float("nan"), "text": "x"},
            "seconds",
            "type",
        ),
        ("args_network_set_hostname", {"hostname": "Bad_Host"}, "hostname", "pattern"),
        ("args_counter_add", {"amount": 1001}, "amount", "maximum"),
    ],
)
def test_argument_builders_validate_like_the_device(
    sim_mod: ModuleType, fn: str, kwargs: dict, argument: str, rule: str
) -> None:
    builder = getattr(sim_mod._bindings, fn)
    with pytest.raises(ValidationError) as err:
        builder(**kwargs)
    assert (err.value.argument, err.value.rule) == (argument, rule)


def test_argument_builders_accept_valid_values(sim_mod: ModuleType) -> None:
    b = sim_mod._bindings
    assert b.args_audio_speaker_set_volume(0) == {"volume": 0}
    assert b.args_display_show_text(True, 30, "é" * 64) == {"scroll": True, "seconds": 30, "text": "é" * 64}
    assert b.args_network_set_hostname("lamp-01") == {"hostname": "lamp-01"}
    assert b.args_get_device_status() == {}


async def test_typed_calls_against_a_fake_device(
    sim_mod: ModuleType, gateway: Gateway, ws_url: str, fake_devices
) -> None:
    fake = FakeWsDevice(ws_url, "typed")
    fake_devices.append(fake)
    await fake.start()
    device = await gateway.wait_for_device(timeout=5)
    sim = sim_mod.XiaozhiSim(device, policy="strict")
    assert sim.device is device
    assert await sim.audio_speaker.set_volume(volume=42) is True
    status = await sim.get_device_status()
    assert status["audio_speaker"]["volume"] == 42
    assert await sim.counter.add() == 1 and await sim.counter.add(amount=-3) == -2
    temp = await sim.sensor.read_temperature()
    assert temp == 21.5 and type(temp) is float
    assert await sim.display.show_text(text="hello") == "shown: hello"
    img = await sim.camera.snapshot()
    assert isinstance(img, runtime.Image) and img.mime_type == "image/png" and img.data.startswith(b"\x89PNG")
    assert await sim.reboot() is None
    sent = [m for m in fake.core.received if m.get("method") == "tools/call"]
    assert sent[-3]["params"] == {
        "name": "self.display.show_text",
        "arguments": {"scroll": False, "seconds": 3.0, "text": "hello"},
    }
    before = len(fake.core.received)
    with pytest.raises(ValidationError):
        await sim.screen.set_theme(theme="blue")
    assert len(fake.core.received) == before, "nothing is sent when validation fails"
    # device.call uses the bindings' return kinds once bound
    assert await device.call("self.counter.add", {"amount": 1}) == -1


async def test_bindings_fingerprint_policy(
    sim_mod: ModuleType, gateway: Gateway, ws_url: str, fake_devices
) -> None:
    fake = FakeWsDevice(ws_url, "other-spec", core=FakeCore(fingerprint="ffffffffffffffff"))
    fake_devices.append(fake)
    await fake.start()
    device = await gateway.wait_for_device(timeout=5)
    with pytest.raises(SpecMismatch):
        sim_mod.XiaozhiSim(device, policy="strict")
    sim = sim_mod.XiaozhiSim(device)  # warn: usable, validated locally
    assert await sim.audio_speaker.set_volume(volume=3) is True
    with pytest.raises(ValueError):
        sim_mod.XiaozhiSim(device, policy="sometimes")


async def test_lamp_bindings(lamp_mod: ModuleType, gateway: Gateway, ws_url: str, fake_devices) -> None:
    fake = FakeWsDevice(ws_url, "lamp", core=FakeCore(LAMP_SPEC, extra_tools=False))
    fake_devices.append(fake)
    await fake.start()
    lamp = lamp_mod.DeskLamp(await gateway.wait_for_device(timeout=5), policy="strict")
    assert await lamp.light.set_rgb(r=255, g=0, b=0) is True
    assert await lamp.light.set_power(on=True) is True
    with pytest.raises(ValidationError):
        await lamp.light.set_rgb(r=256, g=0, b=0)
    with pytest.raises(TypeError):
        await lamp.light.set_rgb(255, 0, 0)  # keyword-only
    assert lamp_mod.COMPILED is False


# -- unusual specs ----------------------------------------------------------------------------


def _odd_spec() -> Spec:
    tools = (
        Tool(
            name="self.import.from",  # Python keywords as path segments
            description='Tricky """quotes""" and \\backslashes\\.',
            handler="import_from",
            params=(
                Param(name="class", type="string", enum=("a", "b", 'say "hi"', "back\\slash"), default="a"),
                Param(name="lambda", type="number"),
                Param(name="x-y", type="integer", minimum=-5, maximum=5),
            ),
            returns=Returns(
                kind="object",
                properties=(
                    Field(name="not-an-identifier", type="boolean"),
                    Field(
                        name="items",
                        type="array",
                        items=Field(name="", type="object", properties=(Field("v", "integer"),)),
                    ),
                ),
            ),
        ),
        Tool(
            name="self.ping_me",
            description="Pong.",
            handler="ping_me",
            params=(),
            returns=Returns(kind="none"),
        ),
    )
    return Spec(device=DeviceSpec(name="9 odd device!", version="x.y"), tools=tools, source="odd.yaml")


def test_unusual_names_generate_working_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = emit_python.emit(_odd_spec())
    from mcpgen.codegen.emit.writer import write_tree

    write_tree(tmp_path, files)
    monkeypatch.syspath_prepend(str(tmp_path / "python"))
    mod = importlib.import_module("device_9_odd_device_tools")
    assert mod.Device9OddDevice.DEVICE_NAME == "9 odd device!"
    sig = inspect.signature(mod.ImportTools.from_)
    assert set(sig.parameters) >= {"class_", "lambda_", "x_y"}
    assert mod._bindings.args_import_from("b", 1.5, 5) == {"class": "b", "lambda": 1.5, "x-y": 5}
    with pytest.raises(ValidationError) as err:
        mod._bindings.args_import_from("a", 1.0, 6)
    assert err.value.argument == "x-y"
    assert "Tricky" in (mod.ImportTools.from_.__doc__ or "")
    # Enum values, quotes and backslashes included, are the Literal type of the argument.
    hints = typing.get_type_hints(mod._bindings.args_import_from)
    assert hints["class_"] == typing.Literal["a", "b", 'say "hi"', "back\\slash"]
    assert typing.get_type_hints(mod.ImportTools.from_)["class_"] == hints["class_"]
    assert 'version = "0.0.0"' in files["python/pyproject.toml"]


def test_colliding_tools_are_refused() -> None:
    base = dict(description="d", params=(), returns=Returns(kind="none"))
    spec = Spec(
        device=DeviceSpec(name="c", version="1"),
        tools=(
            Tool(name="self.a.b", handler="h1", **base),
            Tool(name="self.a_b", handler="h2", **base),
            Tool(name="self.a", handler="h3", **base),
        ),
    )
    with pytest.raises(ValueError, match="namespace"):
        emit_python.emit(spec)
    reserved = Spec(
        device=DeviceSpec(name="c", version="1"), tools=(Tool(name="self.FINGERPRINT", handler="h", **base),)
    )
    with pytest.raises(ValueError, match="reserved"):
        emit_python.emit(reserved)


# -- editors and mypy see the signatures --------------------------------------------------------


def test_mypy_checks_calls_against_the_stubs(bindings_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    # Each line marked `# E` must be a mypy error, and no other line.
    code = """\
from mcpgen.runtime import Device, Gateway
from desk_lamp_tools import DeskLamp
from xiaozhi_sim_tools import XiaozhiSim
from xiaozhi_sim_tools._bindings import args_screen_set_theme


async def main(device: Device, theme: str) -> None:
    sim = XiaozhiSim(device)
    ok: bool = await sim.audio_speaker.set_volume(volume=5)
    status = await sim.get_device_status()
    level: int = status['battery']['level']
    await sim.audio_speaker.set_volume(volume='loud')  # E
    await sim.display.show_text(txt='typo')  # E
    bad: str = await sim.counter.add()  # E
    await sim.screen.set_theme(theme="dark")
    await sim.screen.set_theme(theme="drak")  # E
    await sim.screen.set_theme(theme=theme)  # E a plain str is not one of the enum's values
    await sim.sensor.read_temperature()
    await sim.sensor.read_temperature(unit="kelvin")  # E
    args_screen_set_theme("light")
    args_screen_set_theme("blue")  # E
    lamp = DeskLamp(device, policy="strict")
    await lamp.light.set_effect(effect="rainbow")
    await lamp.light.set_effect(effect="rainbw")  # E
    async for press in lamp.events.button_pressed():
        presses: int = press.count
        where: str = press.cont  # E
    power = await lamp.events.power_changed().next(timeout=1)
    on: bool = power.on
    source: str = power.source
    bad_source: int = power.source  # E the enum is a Literal of strings
    lamp.on_power_changed(lambda e: print(e.source))
    lamp.on_power_changed(lambda e: print(e.sauce))  # E
    lamp.on_button_pressed(print)
    lamp.events.door_opened()  # E
    def _untyped(name: str, params: dict) -> None: ...
    device.on_event(_untyped)
    XiaozhiSim(device, policy="off")
    XiaozhiSim(device, policy="strcit")  # E
    Gateway(port=0, policy="off")
    Gateway(port=0, policy="warning")  # E the runtime API's policy is a Literal too
    lamps = DeskLamp.fanout([device, lamp], timeout=2.0)
    powered = await lamps.light.set_power(on=False)
    flags: dict[object, bool] = powered.ok
    wrong: dict[object, str] = powered.ok  # E the values are the tool's bool
    await lamps.light.set_effect(effect="rainbw")  # E validated like a single call
    totals = await XiaozhiSim.fanout([device]).counter.add(amount=1)
    n: int = totals[device]
"""
    snippet = tmp_path / "use_sim.py"
    snippet.write_text(code, encoding="utf-8")
    expected = {n for n, line in enumerate(code.splitlines(), 1) if "# E" in line}
    root = Path(__file__).resolve().parents[2]
    env_path = f"{bindings_dir / 'default' / 'python'}:{bindings_dir / 'lamp' / 'python'}:{root}"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--no-incremental",
            "--follow-imports=silent",
            "--ignore-missing-imports",
            str(snippet),
        ],
        capture_output=True,
        text=True,
        env={"MYPYPATH": env_path, "PATH": "/usr/bin:/bin", "PYTHONPATH": env_path},
        cwd=tmp_path,
        timeout=300,
    )
    out = proc.stdout
    errors = [line for line in out.splitlines() if ": error:" in line]
    lines = {int(line.split(":")[1]) for line in errors}
    assert lines == expected, out
    assert 'to "set_effect" of "LightTools" has incompatible type "Literal[\'rainbw\']"' in out

"""Two versions of the desk lamp for the mixed-fleet tests: v1 is toolspec/desk_lamp.yaml,
v2 is tests/evolution/desk_lamp_v2.yaml (a new tool, a new optional parameter, a widened
range). Each gets a host simulator; the backend gets the v2 bindings, built with the
history that records both releases."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from mcpgen.codegen.spec.history import history_dir, write_release
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.targets.host import build_host
from mcpgen.codegen.targets.python import build_bindings, import_bindings

REPO = Path(__file__).resolve().parents[2]
V1_SPEC = REPO / "toolspec" / "desk_lamp.yaml"
V1_HANDLERS = REPO / "toolspec" / "desk_lamp_handlers.cpp"
V2_SPEC = REPO / "tests" / "evolution" / "desk_lamp_v2.yaml"
V2_EXTRA_HANDLERS = REPO / "tests" / "evolution" / "desk_lamp_v2_extra_handlers.cpp"
PURE = os.environ.get("MCPGEN_PURE_PYTHON") == "1"


@dataclass
class LampVersions:
    exe_v1: Path
    exe_v2: Path
    module: ModuleType  # the v2 bindings, carrying the v1 release
    fingerprint_v1: str
    fingerprint_v2: str


def build_versions(out: Path) -> LampVersions:
    quiet = lambda _m: None  # noqa: E731
    v1 = out / "v1" / "desk_lamp.yaml"
    v1.parent.mkdir(parents=True)
    shutil.copy(V1_SPEC, v1)
    shutil.copy(V1_HANDLERS, v1.with_name("desk_lamp_handlers.cpp"))
    spec1 = load_spec(v1)
    write_release(v1, spec1)
    exe_v1 = build_host(v1, out / "v1" / "build", log=quiet)

    v2 = out / "v2" / "desk_lamp.yaml"
    v2.parent.mkdir(parents=True)
    shutil.copy(V2_SPEC, v2)
    v2.with_name("desk_lamp_handlers.cpp").write_text(
        V1_HANDLERS.read_text(encoding="utf-8") + "\n" + V2_EXTRA_HANDLERS.read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    shutil.copytree(history_dir(v1), history_dir(v2))
    spec2 = load_spec(v2)
    write_release(v2, spec2)
    exe_v2 = build_host(v2, out / "v2" / "build", log=quiet)
    pydir = build_bindings(v2, out / "v2" / "build", log=quiet, compile=not PURE)
    module = import_bindings(pydir, "desk_lamp_tools")
    return LampVersions(exe_v1, exe_v2, module, spec1.fingerprint, spec2.fingerprint)


def build_unreleased(out: Path) -> tuple[Path, str]:
    """A simulator of a v2 edit that was never released (another description): its
    fingerprint is in no history. Returns the executable and the fingerprint."""
    v3 = out / "v3" / "desk_lamp.yaml"
    v3.parent.mkdir(parents=True)
    v3.write_text(
        V2_SPEC.read_text(encoding="utf-8").replace("Wi-Fi RGB desk lamp.", "A dev build."), encoding="utf-8"
    )
    shutil.copy(out / "v2" / "desk_lamp_handlers.cpp", v3.with_name("desk_lamp_handlers.cpp"))
    exe = build_host(v3, out / "v3" / "build", log=lambda _m: None)
    return exe, load_spec(v3).fingerprint


async def exercise_mixed_fleet(
    versions: LampVersions, d1: object, d2: object, *, events: bool = True
) -> None:
    """Every typed call to both devices, each by its own version's rules (raises on failure).

    ``events=False`` for MqttFleet, whose workers get device notifications through
    ``on_notification`` rather than the device handles."""
    import pytest

    from mcpgen.runtime import NotSupported, ValidationError

    mod = versions.module
    assert getattr(d1, "fingerprint") == versions.fingerprint_v1  # noqa: B009
    assert getattr(d2, "fingerprint") == versions.fingerprint_v2  # noqa: B009
    assert getattr(d1, "dynamic") is False and getattr(d2, "dynamic") is False  # noqa: B009
    lamp1, lamp2 = mod.DeskLamp(d1), mod.DeskLamp(d2)  # policy "compatible" is the default
    assert (lamp1.version, lamp2.version) == ("0.3.1", "0.4.0")
    # The calls both versions have, typed by each version.
    assert await lamp1.light.set_rgb(r=1, g=2, b=3) is True
    assert await lamp2.light.set_rgb(r=1, g=2, b=3) is True
    assert (await lamp1.light.get_state())["rgb"] == [1, 2, 3]
    effect = await lamp1.light.set_effect(effect="candle")
    assert effect.startswith("effect candle at speed 1"), effect
    # The widened range: v2 takes 1000 minutes; v1's bindings refuse it locally, by v1's range.
    assert await lamp2.timer.set(minutes=1000) == 1000
    assert await lamp1.timer.set(minutes=720) == 720
    sent = d1.session.next_id  # type: ignore[attr-defined]
    with pytest.raises(ValidationError, match="minutes"):
        await lamp1.timer.set(minutes=1000)
    # The new tool and the new optional parameter: NotSupported on v1, nothing sent.
    with pytest.raises(NotSupported, match="self.light.set_brightness"):
        await lamp1.light.set_brightness(percent=50)
    with pytest.raises(NotSupported, match="cycles"):
        await lamp1.light.set_effect(effect="breathe", cycles=2)
    assert d1.session.next_id == sent  # type: ignore[attr-defined]
    assert await lamp2.light.set_brightness(percent=50) == 50
    effect = await lamp2.light.set_effect(effect="breathe", cycles=2)
    assert effect.startswith("effect breathe at speed 1"), effect
    assert not lamp1.supports("self.light.set_brightness") and lamp2.supports("self.light.set_brightness")
    assert lamp1.supports("self.light.set_effect") and not lamp1.supports("self.light.set_effect", "cycles")
    assert lamp2.supports("self.light.set_effect", "cycles")
    if not events:
        return
    # Each device's own events, typed.
    presses1, presses2 = lamp1.events.button_pressed(), lamp2.events.button_pressed()
    assert await lamp1.button.press(count=2) is False
    assert await lamp2.button.press(count=1) is True
    assert (await presses1.next(timeout=5)).count == 2
    assert (await presses2.next(timeout=5)).count == 1

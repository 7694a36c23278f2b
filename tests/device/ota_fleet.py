"""Simulated OTA fleets for the update tests: the desk lamp v1 and v2 with `device.ota: true`,
simulators that run under their OTA supervisor (--ota-dir), and fake images."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from lamp_versions import V1_HANDLERS, V1_SPEC, V2_EXTRA_HANDLERS, V2_SPEC

from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.targets.host import build_host


@dataclass
class OtaLamps:
    exe_v1: Path
    exe_v2: Path
    fingerprint_v1: str
    fingerprint_v2: str


def with_ota(spec_text: str, version: str) -> str:
    line = f"  version: {version}\n"
    assert line in spec_text, f"no `{line.strip()}` in the spec"
    return spec_text.replace(line, line + "  ota: true\n", 1)


def build_ota_lamps(out: Path) -> OtaLamps:
    quiet = lambda _m: None  # noqa: E731
    v1 = out / "v1" / "desk_lamp.yaml"
    v1.parent.mkdir(parents=True)
    v1.write_text(with_ota(V1_SPEC.read_text(encoding="utf-8"), "0.3.1"), encoding="utf-8")
    handlers_v1 = V1_HANDLERS.read_text(encoding="utf-8")
    v1.with_name("desk_lamp_handlers.cpp").write_text(handlers_v1, encoding="utf-8")
    v2 = out / "v2" / "desk_lamp.yaml"
    v2.parent.mkdir(parents=True)
    v2.write_text(with_ota(V2_SPEC.read_text(encoding="utf-8"), "0.4.0"), encoding="utf-8")
    v2.with_name("desk_lamp_handlers.cpp").write_text(
        V1_HANDLERS.read_text(encoding="utf-8") + "\n" + V2_EXTRA_HANDLERS.read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    exe1 = build_host(v1, out / "v1" / "build", log=quiet)
    exe2 = build_host(v2, out / "v2" / "build", log=quiet)
    return OtaLamps(exe1, exe2, load_spec(v1).fingerprint, load_spec(v2).fingerprint)


def fake_image(path: Path, *, name: str, version: str, fingerprint: str, body: str) -> Path:
    """A shell script that carries an image marker: ``body`` is what it does when booted
    (``exit 3``: an image that dies at boot; ``sleep 600``: one that never connects)."""
    marker = f"MCPGEN-OTA-IMAGE|{name}|{version}|{fingerprint}|"
    path.write_text(f"#!/bin/sh\n{body}\n# {marker}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


@contextmanager
def fleet(exe: Path, url: str, ids: list[str], tmp: Path, *extra: str) -> Iterator[list[subprocess.Popen]]:
    """One supervised simulator per id, each with its own OTA directory and log file."""
    procs: list[subprocess.Popen] = []
    try:
        for i in ids:
            with open(tmp / f"{i}.log", "wb") as log:
                procs.append(
                    subprocess.Popen(
                        [str(exe), "--ws", url, "--device-id", i, "--ota-dir", str(tmp / f"{i}.ota"), *extra],
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=log,
                    )
                )
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def ota_state(tmp: Path, device_id: str) -> str:
    return (tmp / f"{device_id}.ota" / "state").read_text(encoding="utf-8")

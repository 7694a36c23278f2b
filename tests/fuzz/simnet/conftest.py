"""Builds the default device's host simulator once, with ASan + UBSan (abort on any report)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from device_testlib import DEFAULT_SPEC, copy_spec

from mcpgen.codegen.targets.host import build_host

SANITIZE = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g", "-O1")


def _sanitizers_work() -> bool:
    proc = subprocess.run(
        ["g++", "-x", "c++", *SANITIZE, "-", "-o", "/dev/null"],
        input="int main() { return 0; }\n",
        capture_output=True,
        text=True,
    )
    return proc.returncode == 0


@pytest.fixture(scope="session")
def asan_sim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("MCPGEN_FUZZ_SIM_EXE")  # fuzz another build (e.g. an older one)
    if given:
        return Path(given)
    if not _sanitizers_work():
        pytest.skip("g++ cannot build with -fsanitize=address,undefined here (libasan/libubsan missing)")
    out = tmp_path_factory.mktemp("asan_sim")
    spec = copy_spec(DEFAULT_SPEC, out / "spec")
    return build_host(spec, out / "build", log=lambda _: None, extra_flags=SANITIZE)

"""scripts/esp_idf_gnu_riscv.sh: the wrappers that let ESP-IDF build the ESP32-C3 project with
Debian's riscv64-unknown-elf GCC, and the C++ runtime shim they link (Debian's GCC has no
libstdc++). The real link of ESP-IDF 5.5.3's serial-transport image stopped on
`undefined reference to std::nothrow` (nvs_flash's `new (std::nothrow)`), which the shim lacked;
this checks the shim against the C++ runtime symbols that image references, without ESP-IDF."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "esp_idf_gnu_riscv.sh"
PREFIX = "riscv64-unknown-elf-"

# The C++ runtime symbols left undefined by ESP-IDF 5.5.3's components and the port in the
# serial-transport esp32c3 image (nm of its component libraries, less what they define), and
# those the port's own code needs (operator new/delete, the pure-virtual trap).
NEEDED = {
    "_ZSt7nothrow": "std::nothrow",
    "_ZnwjRKSt9nothrow_t": "operator new(size_t, const std::nothrow_t&)",
    "_ZnajRKSt9nothrow_t": "operator new[](size_t, const std::nothrow_t&)",
    "_Znwj": "operator new(size_t)",
    "_Znaj": "operator new[](size_t)",
    "_ZdlPv": "operator delete(void*)",
    "_ZdlPvj": "operator delete(void*, size_t)",
    "_ZdaPv": "operator delete[](void*)",
    "__cxa_pure_virtual": "__cxa_pure_virtual",
}

pytestmark = pytest.mark.skipif(
    shutil.which(f"{PREFIX}gcc") is None or shutil.which(f"{PREFIX}nm") is None,
    reason=f"{PREFIX}gcc not installed (apt-get install gcc-riscv64-unknown-elf)",
)


def _defined(archive: Path) -> set[str]:
    out = subprocess.run(
        [f"{PREFIX}nm", "--defined-only", str(archive)], capture_output=True, text=True, check=True
    ).stdout
    return {line.split()[-1] for line in out.splitlines() if len(line.split()) == 3}


def test_cxx_runtime_shim_defines_what_the_esp_idf_image_references(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPGEN_RISCV")}
    r = subprocess.run(["bash", str(SCRIPT), str(tmp_path)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    archive = tmp_path / "lib" / "libstdc++.a"
    if not archive.is_file():
        pytest.skip(f"{PREFIX}g++ has a libstdc++ of its own: the shim is not built")
    missing = {sym: name for sym, name in NEEDED.items() if sym not in _defined(archive)}
    assert not missing, f"scripts/esp_idf_gnu_riscv/cxx_runtime.cpp does not define {missing}"
    # the compiler wrappers exist under ESP-IDF's names and add riscv32-esp-elf-gcc's defaults
    gcc = (tmp_path / "riscv32-esp-elf-gcc").read_text()
    assert "-mabi=ilp32" in gcc and "-march=rv32imc_zicsr_zifencei" in gcc

"""Records ``mcpgen-runtime`` as installed in a developer checkout (scripts/dev.sh setup).

    python scripts/dev_runtime_record.py

The developer install (``pip install -e .``) is one distribution, ``mcpgen``, that already
holds ``mcpgen.runtime``. A release splits it in two (scripts/dist.py), and the bindings
package that ``codegen build`` writes depends on ``mcpgen-runtime`` only. So that
``pip install build/<spec>/python`` works in a checkout as it does for a pip user, this
installs a wheel that holds no code, only the record of ``mcpgen-runtime`` at the
checkout's version, requiring that same ``mcpgen`` (whose editable install provides the
modules). Written by hand because no packaging tool makes a metadata-only wheel.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dist import REPO, RUNTIME, version  # noqa: E402  (the one version reader)


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_record_wheel(out: Path) -> Path:
    ver = version()
    info = f"{RUNTIME.replace('-', '_')}-{ver}.dist-info"
    files = {
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {RUNTIME}\nVersion: {ver}\n"
            "Summary: mcpgen-runtime as provided by a developer checkout's editable mcpgen\n"
            f"Requires-Dist: mcpgen=={ver}\n"
        ).encode(),
        f"{info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: mcpgen dev_runtime_record\n"
            b"Root-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = [_record_line(name, data) for name, data in files.items()] + [f"{info}/RECORD,,"]
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{RUNTIME.replace('-', '_')}-{ver}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel


def main() -> int:
    wheel = build_record_wheel(REPO / "build" / "dev-runtime-record")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "--no-deps",
            "--force-reinstall",
            str(wheel),
        ],
        check=False,
    ).returncode


if __name__ == "__main__":
    raise SystemExit(main())

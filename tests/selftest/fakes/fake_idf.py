"""A stand-in for ESP-IDF's idf.py (tests/selftest/test_esp_qemu_run.py): records its
arguments in $FAKE_LOG and writes what `set-target` and `build` leave in the build
directory (project_description.json, flash_args, the three images, config/sdkconfig.h)."""

import json
import os
import sys
from pathlib import Path

args = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(["idf.py", *args]) + "\n")
if os.environ.get("FAKE_IDF_FAIL"):
    print("CMake Error: the fake build failed", flush=True)
    raise SystemExit(2)
build = Path(args[args.index("-B") + 1])
build.mkdir(parents=True, exist_ok=True)
# the action: the first argument after -B BUILD that is not a -DNAME=VALUE cache entry
action = next(a for a in args[args.index("-B") + 2 :] if not a.startswith("-D"))
if action == "set-target":
    (build / "project_description.json").write_text(json.dumps({"target": args[-1]}))
elif action == "build":
    (build / "bootloader").mkdir(exist_ok=True)
    (build / "partition_table").mkdir(exist_ok=True)
    (build / "config").mkdir(exist_ok=True)
    (build / "bootloader" / "bootloader.bin").write_bytes(b"\xe9\x03\x02\x20" + bytes(60))
    (build / "partition_table" / "partition-table.bin").write_bytes(b"\xaa\x50" + bytes(30))
    (build / "app.bin").write_bytes(b"\xe9\x05\x02\x20" + bytes(124))
    (build / "config" / "sdkconfig.h").write_text('#define CONFIG_ESPTOOLPY_FLASHSIZE "4MB"\n')
    (build / "flash_args").write_text(
        "--flash_mode dio --flash_freq 80m --flash_size 4MB\n"
        "0x0 bootloader/bootloader.bin\n0x8000 partition_table/partition-table.bin\n0x10000 app.bin\n"
    )
    print("Project build complete.", flush=True)

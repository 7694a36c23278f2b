"""Groups the suite for pytest-xdist (scripts/dev.sh test runs it on every core, --dist loadgroup).

A folder whose conftest builds simulators or firmware once per session runs on one worker, so
each build happens once; every other test file is its own group, so its module fixtures are
built once and the files spread over the workers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# The folders whose session fixtures compile something (bench: the benchmarks' build folder).
FOLDERS_SHARING_BUILDS = (
    "bench", "console", "device", "e2e", "fuzz/simnet", "mqtt", "qemu", "selftest", "xiaozhi",
)  # fmt: skip


def xdist_group_of(path: Path) -> str:
    rel = path.resolve().relative_to(TESTS).as_posix()
    for folder in FOLDERS_SHARING_BUILDS:
        if rel.startswith(folder + "/"):
            return folder
    return rel


# Marked as each test is collected, before any pytest_collection_modifyitems hook (pytest-xdist
# names each test's group from the marks in its own; hook order between a conftest and a plugin
# differs between pytest releases).
def pytest_itemcollected(item: pytest.Item) -> None:
    item.add_marker(pytest.mark.xdist_group(xdist_group_of(Path(item.path))))

"""The module paths of 0.2 (before the runtime moved into folders) still import: the same
module object under the old name, with a DeprecationWarning that names the new path."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from mcpgen.runtime._moved import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_is_the_moved_module(old: str) -> None:
    new = importlib.import_module(MOVED[old])
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=MOVED[old].replace(".", r"\.")):
        aliased = importlib.import_module(old)
    assert aliased is new


def test_a_0_2_bindings_import_line_still_works() -> None:
    # A fresh interpreter, as a backend that upgraded the runtime but not its bindings runs.
    code = (
        "import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
        "try:\n"
        "    from mcpgen.runtime.device import Device\n"
        "except DeprecationWarning as w:\n"
        "    print('warned:', w)\n"
        "warnings.simplefilter('ignore')\n"
        "from mcpgen.runtime.device import Device\n"
        "from mcpgen.runtime.session.device import Device as New\n"
        "assert Device is New\n"
        "from mcpgen.runtime import gateway, mqtt\n"
        "print(gateway.__name__, mqtt.__name__)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "warned: mcpgen.runtime.device moved to mcpgen.runtime.session.device" in proc.stdout
    assert "mcpgen.runtime.links.websocket.gateway mcpgen.runtime.links.mqtt.gateway" in proc.stdout


def test_every_moved_module_exists_at_its_new_path() -> None:
    for new in MOVED.values():
        assert importlib.import_module(new).__name__ == new

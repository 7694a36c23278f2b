"""``python -m mcpgen.runtime.auth`` runs without runpy's double-import warning (issue 31 item 17)."""

from __future__ import annotations

import os
import subprocess
import sys

from mcpgen.runtime import HmacAuth


def test_minting_a_token_prints_only_the_token() -> None:
    # Before: every run printed "RuntimeWarning: 'mcpgen.runtime.auth' found in
    # sys.modules after import of package 'mcpgen.runtime' ..." (the module ran twice).
    env = dict(os.environ, MCPGEN_HMAC_SECRET="s3cret")
    run = [sys.executable, "-W", "default", "-m", "mcpgen.runtime.auth", "kitchen"]
    done = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    assert done.stderr == ""
    assert done.stdout == HmacAuth("s3cret").token_for("kitchen") + "\n"
    helped = subprocess.run([*run[:-1], "--help"], capture_output=True, text=True, check=True)
    assert helped.stderr == "" and helped.stdout.startswith("usage: python -m mcpgen.runtime.auth")

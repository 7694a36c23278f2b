"""Fixtures of the xiaozhi-target tests: the stock header and one harness per spec.

``header_dir`` is the real stock ``main/mcp_server.h`` when ``MCPGEN_XIAOZHI_SRC`` names a
xiaozhi-esp32 checkout, else the stand-in written here (``stock_standin/``), so the glue's
behaviour is tested on every machine; ``test_xiaozhi_standin.py`` compares the two when
a checkout is given."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from xiaozhi_testlib import (  # noqa: E402
    DEFAULT_SPEC,
    LAMP_SPEC,
    STANDIN_DIR,
    Harness,
    build_harness,
    missing_libraries,
    real_stock_header,
    sanitizers_work,
)

from mcpgen.codegen.targets.xiaozhi import build_xiaozhi  # noqa: E402

EDGE_SPEC = """\
device:
  name: edge-device
  version: 0.0.1
tools:
  - name: self.edge.wrong_kind
    description: Returns text although the spec says integer.
    returns: integer
  - name: self.edge.big
    description: Multiply a positive integer by a million.
    params:
      n: {type: integer, min: 1}
    returns: integer
  - name: self.edge.bad_object
    description: Claims to return an object but writes none.
    returns: {type: object, properties: {x: {type: integer}}}
  - name: self.edge.label
    description: Echo a label and a wide integer; the label's default has quotes.
    params:
      label: {type: string, default: 'say "hi"', max_length: 16}
      wide: {type: integer, min: -10000000000, max: 10000000000, default: 7}
    returns: string
"""

EDGE_HANDLERS = """\
#include <stdio.h>

#include "mcp_tools.h"

namespace tools {

mcpgen::Result edge_wrong_kind(const EdgeWrongKindArgs&, mcpgen::Context&) {
  return mcpgen::Result::Text("not an integer");
}

mcpgen::Result edge_big(const EdgeBigArgs& args, mcpgen::Context&) {
  return mcpgen::Result::Int(args.n * 1000000);
}

mcpgen::Result edge_bad_object(const EdgeBadObjectArgs&, mcpgen::Context&) {
  return mcpgen::Result::Object();  // without writing one with ctx.object()
}

mcpgen::Result edge_label(const EdgeLabelArgs& args, mcpgen::Context& ctx) {
  snprintf(ctx.scratch(), ctx.scratch_size(), "%s/%lld", args.label, static_cast<long long>(args.wide));
  return mcpgen::Result::Text(ctx.scratch());
}

}  // namespace tools
"""


def _quiet(_: str) -> None:
    pass


@pytest.fixture(scope="session")
def libraries() -> None:
    """cJSON and mbedtls (scripts/dev.sh installs them): a failure in CI, a skip elsewhere."""
    why = missing_libraries()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(why + " -- required in CI", pytrace=False)
        pytest.skip(why)


@pytest.fixture(scope="session")
def real_header_dir(libraries: None, tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """The real stock header from $MCPGEN_XIAOZHI_SRC, or None without a checkout."""
    return real_stock_header(tmp_path_factory.mktemp("stock_header"))


@pytest.fixture(scope="session")
def header_dir(real_header_dir: Path | None) -> Path:
    return real_header_dir if real_header_dir is not None else STANDIN_DIR


@pytest.fixture(scope="session")
def sanitize() -> bool:
    return sanitizers_work()


def _copy_spec(src: Path, dest_dir: Path) -> Path:
    dest_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dest_dir / src.name)
    handlers = src.with_name(f"{src.stem}_handlers.cpp")
    shutil.copy(handlers, dest_dir / handlers.name)
    return dest_dir / src.name


def _harness(spec: Path, header: Path, sanitize: bool, tmp: Path) -> Harness:
    glue = build_xiaozhi(spec, tmp / "out", log=_quiet)
    return Harness(build_harness(glue, header, tmp / "harness", sanitize=sanitize))


@pytest.fixture(scope="session")
def stock_boot_harness(header_dir: Path, sanitize: bool, tmp_path_factory: pytest.TempPathFactory) -> Harness:
    """The default device wired as documented, in a harness that boots like the stock
    firmware (InitializeTools, then AddCommonTools and AddUserOnlyTools), built without
    MCPGEN_XIAOZHI_REGISTER_STOCK_NAMES."""
    tmp = tmp_path_factory.mktemp("xz_stock_boot")
    glue = build_xiaozhi(_copy_spec(DEFAULT_SPEC, tmp / "spec"), tmp / "out", log=_quiet)
    exe = build_harness(glue, header_dir, tmp / "harness", sanitize=sanitize, defines=())
    return Harness(exe, ("--stock-boot",))


@pytest.fixture(scope="session")
def edge_spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("edge_spec")
    (d / "edge.yaml").write_text(EDGE_SPEC, encoding="utf-8")
    (d / "edge_handlers.cpp").write_text(EDGE_HANDLERS, encoding="utf-8")
    return d / "edge.yaml"


@pytest.fixture(scope="session")
def default_harness(header_dir: Path, sanitize: bool, tmp_path_factory: pytest.TempPathFactory) -> Harness:
    tmp = tmp_path_factory.mktemp("xz_default")
    return _harness(_copy_spec(DEFAULT_SPEC, tmp / "spec"), header_dir, sanitize, tmp)


@pytest.fixture(scope="session")
def lamp_harness(header_dir: Path, sanitize: bool, tmp_path_factory: pytest.TempPathFactory) -> Harness:
    tmp = tmp_path_factory.mktemp("xz_lamp")
    return _harness(_copy_spec(LAMP_SPEC, tmp / "spec"), header_dir, sanitize, tmp)


@pytest.fixture(scope="session")
def edge_harness(
    header_dir: Path, sanitize: bool, edge_spec: Path, tmp_path_factory: pytest.TempPathFactory
) -> Harness:
    return _harness(edge_spec, header_dir, sanitize, tmp_path_factory.mktemp("xz_edge"))

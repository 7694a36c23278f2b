"""Fixtures of the xiaozhi-target tests: the stock header and one harness per spec."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from xiaozhi_testlib import (  # noqa: E402
    DEFAULT_SPEC,
    LAMP_SPEC,
    Harness,
    HeaderNotFound,
    build_harness,
    missing_libraries,
    sanitizers_work,
    stock_header,
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
def header_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    why = missing_libraries()
    if why is not None:
        pytest.skip(why)
    try:
        return stock_header(tmp_path_factory.mktemp("stock_header"))
    except HeaderNotFound as exc:
        pytest.skip(str(exc))


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

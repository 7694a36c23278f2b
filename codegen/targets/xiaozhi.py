"""The "xiaozhi" target: a drop-in directory for the stock xiaozhi-esp32 firmware.

``write_glue(ctx)`` (``build_xiaozhi(spec_path, outdir)`` from a path) writes
``outdir/xiaozhi/``: what ``codegen.emit.xiaozhi`` emits (the generated glue and tables,
and from ``shipped_sources`` the mcpgen core files the handlers and the glue need and the
port, unchanged from ``firmware_template/core/mcpgen`` and ``firmware_template/ports/xiaozhi``)
and a copy of the spec's ``<stem>_handlers.cpp`` (created beside the spec as a starter
first when missing). Nothing is compiled here: the
stock firmware's ``main/mcp_server.h`` comes from the user's checkout (see
``docs/xiaozhi.md``; ``tests/xiaozhi`` compiles and runs it against the real header).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mcpgen.codegen.emit import xiaozhi as emit_xiaozhi
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.spec.ota import require_host_only
from mcpgen.codegen.targets import user_handlers
from mcpgen.codegen.targets.base import BuildContext, BuildOptions, Built, Target
from mcpgen.codegen.targets.writer import write_tree


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BuildError(f"cannot read {path}: {exc.strerror or exc}") from exc


def build_xiaozhi(spec_path: Path, outdir: Path, *, log: Callable[[str], None] = print) -> Path:
    """Loads ``spec_path`` and writes its drop-in directory (:func:`write_glue`); returns
    ``outdir/xiaozhi``. The front door for scripts and tests; ``codegen`` calls the target."""
    return write_glue(BuildContext.load(spec_path, outdir, BuildOptions(log=log)))


def write_glue(ctx: BuildContext) -> Path:
    """Writes the xiaozhi drop-in directory of ``ctx.spec``; returns ``outdir/xiaozhi``.

    Only changed files are rewritten. Raises BuildError when the spec uses something the
    stock McpServer cannot serve (the message names the tool and parameter).
    """
    ctx = ctx.resolved()
    spec, spec_path, outdir, log = ctx.spec, ctx.spec_path, ctx.outdir, ctx.log
    files = ctx.emit("xiaozhi")  # XiaozhiSpecError, or emit_cpp's limits: a BuildError

    handlers = user_handlers.ensure_handlers(spec, spec_path, log)
    out = emit_xiaozhi.OUT_DIR
    files.update(emit_xiaozhi.shipped_sources())
    files[f"{out}/{handlers.name}"] = _read(handlers)

    written = write_tree(outdir, files)
    for path in written:
        log(f"wrote {path}")
    for name in emit_xiaozhi.stock_collisions(spec):
        log(
            f"warning: {name}: the stock xiaozhi firmware registers a tool of this name too; the "
            "glue leaves the spec's out and the stock tool serves it (to serve the spec's: remove "
            "the stock one from main/mcp_server.cc, build with MCPGEN_XIAOZHI_REGISTER_STOCK_NAMES=1)"
        )
    if spec.events:
        log(
            f"note: the spec's events ({', '.join(e.name for e in spec.events)}) are sent through "
            "mcpgen::xiaozhi::set_notification_sink (Application::SendMcpMessage): set it, see "
            f"{outdir / out / 'README.md'}"
        )
    note = emit_xiaozhi.resources_note(spec)
    if note is not None:
        log(note)
    target = outdir / out
    log(f"xiaozhi glue for {spec.device.name} (fingerprint {spec.fingerprint}): {target}")
    log(f"next: follow {target / 'README.md'} to add it to a xiaozhi-esp32 firmware")
    return target


class XiaozhiTarget(Target):
    """``--target xiaozhi``: glue that registers the spec's tools in a stock xiaozhi-esp32 firmware."""

    name = "xiaozhi"
    summary = "glue that registers the spec's tools in a stock xiaozhi-esp32 firmware"

    def build(self, ctx: BuildContext) -> list[Built]:
        require_host_only(ctx.spec, ctx.spec_path, self.name)
        return [Built("xiaozhi glue", write_glue(ctx))]


TARGETS: tuple[Target, ...] = (XiaozhiTarget(),)

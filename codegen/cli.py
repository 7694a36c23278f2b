"""The ``codegen`` command: check, generate, new, build, run, flash, demo, bridge."""

from __future__ import annotations

import argparse
import asyncio
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Optional

from mcpgen.codegen import __version__

Handler = Callable[[argparse.Namespace], int]

HOST_TARGETS = ("host",)
ESP32_BOARDS = ("esp32", "esp32s3", "esp32c3")
TARGETS = ("host", "qemu", *ESP32_BOARDS, "xiaozhi")  # xiaozhi: added by the xiaozhi-target work


def _err(msg: str) -> None:
    print(f"codegen: error: {msg}", file=sys.stderr)


def _load(spec: Path):  # noqa: ANN202 - returns codegen.model.Spec or None
    """Loads a spec, printing every error; None when it is invalid."""
    from mcpgen.codegen.loader import SpecErrors, load_spec

    try:
        return load_spec(spec)
    except SpecErrors as exc:
        for e in exc.errors:
            print(e.format(), file=sys.stderr)
        n = len(exc.errors)
        print(f"{spec}: {n} error{'s' if n != 1 else ''}", file=sys.stderr)
        return None
    except OSError as exc:
        _err(f"cannot read spec {spec}: {exc.strerror or exc}")
        return None


def cmd_check(args: argparse.Namespace) -> int:
    ok = True
    for spec_path in args.spec:
        spec = _load(Path(spec_path))
        if spec is None:
            ok = False
        elif not args.quiet:
            print(f"{spec_path}: ok ({len(spec.tools)} tools, fingerprint {spec.fingerprint})")
    return 0 if ok else 1


def generate_all(spec_path: Path, outdir: Path, log: Callable[[str], None] = print) -> Optional[object]:
    """Emits every generated file for a spec; writes the starter handlers once. None if invalid."""
    from mcpgen.codegen import emit_cpp, emit_docs, emit_python
    from mcpgen.codegen.writer import write_tree

    spec = _load(spec_path)
    if spec is None:
        return None
    files: dict[str, str] = {}
    for emitter in (emit_cpp, emit_python, emit_docs):
        files.update(emitter.emit(spec))
    written = write_tree(outdir, files)
    log(f"generated {len(files)} files in {outdir} ({len(written)} changed, fingerprint {spec.fingerprint})")
    handlers_file = emit_cpp.ensure_handlers(spec, spec_path, log, check=False)
    _warn_missing_handlers(spec, spec_path, handlers_file)
    return spec


def _warn_missing_handlers(spec, spec_path: Path, handlers_file: Path) -> None:  # noqa: ANN001
    """``generate`` compiles nothing: a missing handler is a warning there, an error in ``build``."""
    from mcpgen.codegen import handlers

    for m in handlers.describe_missing(spec, spec_path, handlers.missing_handlers(spec, handlers_file)):
        print(f"warning: {m.format()}", file=sys.stderr)


def cmd_generate(args: argparse.Namespace) -> int:
    return 0 if generate_all(Path(args.spec), Path(args.output)) is not None else 1


def cmd_new(args: argparse.Namespace) -> int:
    from mcpgen.codegen import resources
    from mcpgen.codegen.names import device_slug
    from mcpgen.codegen.starter import starter_spec

    directory = Path(args.directory)
    spec_path = directory / f"{device_slug(args.name)}.yaml"
    if spec_path.exists():
        _err(f"{spec_path} already exists; pick another name or directory")
        return 1
    try:
        text = starter_spec(args.name, schema_ref=resources.spec_schema().as_uri())
    except ValueError as exc:
        _err(str(exc))
        return 1
    directory.mkdir(parents=True, exist_ok=True)
    spec_path.write_text(text, encoding="utf-8")
    print(f"wrote {spec_path}")
    if generate_all(spec_path, Path(args.output) if args.output else directory / "build") is None:
        return 1
    print(f"next: edit {spec_path}, then `codegen build {spec_path} --target host`")
    return 0


def _default_out(spec: Path, target: str) -> Path:
    return Path("build") / spec.stem / target


def _add_missing_handlers(spec_path: Path) -> bool:
    """``build --add-missing-handlers``: appends stubs for tools without a handler."""
    from mcpgen.codegen import emit_cpp, handlers

    spec = _load(spec_path)
    if spec is None:
        return False
    emit_cpp.ensure_handlers(spec, spec_path, print, check=False)
    if not handlers.append_missing(spec, spec_path):
        print(f"{handlers.handlers_path(spec_path)}: every tool has a handler")
    return True


def cmd_build(args: argparse.Namespace) -> int:
    spec_path = Path(args.spec)
    outdir = Path(args.output) if args.output else _default_out(spec_path, args.target)
    from mcpgen.codegen.build_host import BuildError
    from mcpgen.codegen.handlers import MissingHandlersError

    if args.add_missing_handlers and not _add_missing_handlers(spec_path):
        return 1
    try:
        if args.target == "host":
            from mcpgen.codegen.build_host import build_host
            from mcpgen.codegen.build_python import build_bindings

            if _load(spec_path) is None:
                return 1
            exe = build_host(spec_path, outdir)
            print(f"simulator: {exe}")
            pydir = build_bindings(spec_path, outdir, compile=not args.no_compile_bindings)
            print(f"bindings:  {pydir} (pip install {pydir}, or put it on PYTHONPATH)")
        elif args.target == "qemu":
            from mcpgen.codegen.build_qemu import build_qemu

            if _load(spec_path) is None:
                return 1
            print(f"firmware: {build_qemu(spec_path, outdir)}")
        elif args.target == "xiaozhi":  # glue for the stock xiaozhi-esp32 firmware (docs/xiaozhi.md)
            from mcpgen.codegen.build_xiaozhi import build_xiaozhi

            if _load(spec_path) is None:
                return 1
            build_xiaozhi(spec_path, outdir)
        else:
            from mcpgen.codegen.build_esp32 import build_esp32

            if _load(spec_path) is None:
                return 1
            return build_esp32(spec_path, outdir, args.target, run_pio=not args.no_pio)
    except MissingHandlersError as exc:
        print(str(exc).replace(" --add-missing-handlers", f" --target {args.target} --add-missing-handlers"),
              file=sys.stderr)
        return 1
    except BuildError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    spec_path = Path(args.spec)
    outdir = Path(args.output) if args.output else _default_out(spec_path, args.target)
    if _load(spec_path) is None:
        return 1
    from mcpgen.codegen.run_qemu import run_qemu_session

    return run_qemu_session(spec_path, outdir)


def cmd_flash(args: argparse.Namespace) -> int:
    spec_path = Path(args.spec)
    outdir = Path(args.output) if args.output else _default_out(spec_path, args.board)
    if _load(spec_path) is None:
        return 1
    from mcpgen.codegen.flash import flash

    return flash(spec_path, outdir, args.board, args.port, use_esptool=args.esptool)


def cmd_demo(args: argparse.Namespace) -> int:
    from mcpgen.codegen.demo import run_demo

    return asyncio.run(run_demo(Path(args.spec) if args.spec else None, Path(args.output)))


def cmd_bridge(args: argparse.Namespace) -> int:
    from mcpgen.runtime.bridge.cli import run

    return asyncio.run(run(args))


def _examples(text: str) -> str:
    return "examples:\n" + textwrap.indent(textwrap.dedent(text).strip(), "  ")


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="codegen",
        description="One YAML spec -> MCP tools on ESP32 devices and typed backend bindings.",
        formatter_class=fmt,
        epilog=_examples(
            """
            codegen check toolspec/default_device.yaml
            codegen generate toolspec/default_device.yaml -o build/default
            codegen build toolspec/default_device.yaml --target host
            codegen demo
            """
        ),
    )
    parser.add_argument("--version", action="version", version=f"codegen {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser(
        "check",
        help="validate specs",
        formatter_class=fmt,
        description="Validate specs; print every error with file:line:column.",
        epilog=_examples("codegen check toolspec/*.yaml"),
    )
    p.add_argument("spec", nargs="+", help="spec YAML files")
    p.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "generate",
        help="write device C++, Python bindings, tools.json and docs",
        formatter_class=fmt,
        description="Generate all sources for a spec. Unchanged files are not rewritten; "
        "the handlers file beside the spec is written once and never overwritten.",
        epilog=_examples("codegen generate toolspec/desk_lamp.yaml -o build/lamp"),
    )
    p.add_argument("spec")
    p.add_argument("-o", "--output", required=True, help="output directory")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser(
        "new",
        help="start a new device spec and handlers file",
        formatter_class=fmt,
        epilog=_examples("codegen new my-robot --directory specs/"),
    )
    p.add_argument("name", help="device name (becomes serverInfo.name)")
    p.add_argument("--directory", default=".", help="where to write NAME.yaml (default: .)")
    p.add_argument("-o", "--output", help="generated output directory (default: DIRECTORY/build)")
    p.set_defaults(func=cmd_new)

    p = sub.add_parser(
        "build",
        help="generate and compile firmware (and bindings for host)",
        formatter_class=fmt,
        description="host: the simulator executable (system g++) and the compiled Python "
        "bindings; qemu: a Cortex-M3 image for qemu-system-arm -M mps2-an385; "
        "esp32/esp32s3/esp32c3: a PlatformIO project, then `pio run`; "
        "xiaozhi: glue that registers the spec's tools in a stock xiaozhi-esp32 firmware.",
        epilog=_examples(
            """
                           codegen build toolspec/default_device.yaml --target host -o build/sim
                           codegen build toolspec/default_device.yaml --target qemu
                           codegen build toolspec/desk_lamp.yaml --target esp32s3
                           """
        ),
    )
    p.add_argument("spec")
    p.add_argument("--target", choices=TARGETS, default="host")
    p.add_argument("-o", "--output", help="output directory (default: build/<spec>/<target>)")
    p.add_argument("--no-pio", action="store_true", help="esp32: only generate the PlatformIO project")
    p.add_argument(
        "--no-compile-bindings", action="store_true", help="host: leave the bindings as pure Python"
    )
    p.add_argument(
        "--add-missing-handlers", action="store_true",
        help="first append a starter stub to SPEC_handlers.cpp for every tool that has no handler "
        "(the rest of the file is left as it is)",
    )
    p.set_defaults(func=cmd_build)

    p = sub.add_parser(
        "run",
        help="boot the firmware and connect the runtime to it",
        formatter_class=fmt,
        epilog=_examples("codegen run toolspec/default_device.yaml --target qemu"),
    )
    p.add_argument("spec")
    p.add_argument("--target", choices=("qemu",), default="qemu")
    p.add_argument("-o", "--output")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "flash",
        help="upload firmware to a board",
        formatter_class=fmt,
        epilog=_examples(
            """
                           codegen flash toolspec/default_device.yaml --board esp32s3 --port /dev/ttyUSB0
                           codegen flash toolspec/default_device.yaml --port /dev/ttyACM0 --esptool
                           """
        ),
    )
    p.add_argument("spec")
    p.add_argument("--board", choices=ESP32_BOARDS, default="esp32")
    p.add_argument("--port", required=True, help="serial port, e.g. /dev/ttyUSB0 or socket://host:port")
    p.add_argument("--esptool", action="store_true", help="write the built images with esptool write-flash")
    p.add_argument("-o", "--output")
    p.set_defaults(func=cmd_flash)

    p = sub.add_parser(
        "demo",
        help="build the default device, connect it over WebSocket, call every tool",
        formatter_class=fmt,
        epilog=_examples("codegen demo"),
    )
    p.add_argument("--spec", help="spec to demo (default: toolspec/default_device.yaml)")
    p.add_argument("-o", "--output", default="build/demo", help="build directory (default: build/demo)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser(
        "bridge",
        help="serve devices' tools to standard MCP clients",
        formatter_class=fmt,
        epilog=_examples(
            """
                           codegen bridge --transport stdio \\
                               --device-cmd "build/demo/firmware/build/xiaozhi_sim-sim --stdio"
                           codegen bridge --transport http --port 8808 --gateway-port 8765
                           """
        ),
    )
    try:
        from mcpgen.runtime.bridge.cli import add_arguments
    except ImportError:  # the bridge is optional at import time; `run` reports it
        pass
    else:
        add_arguments(p)
    p.set_defaults(func=cmd_bridge)
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""The ``codegen`` command: check, release, diff, generate, new, build, run, flash, monitor, demo,
ota, selftest, bridge, console.

Every subcommand takes ``-v/--verbose`` and ``-q/--quiet`` (before or after its name).
Expected failures (a spec error, a missing file or compiler, a busy port, a denied
permission) end with ``codegen: error: ...`` and exit code 1, never a traceback; ``-v``
adds the traceback of an *unexpected* error. docs/cli.md describes the commands, the
``check --format json`` output and the exit codes.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import json
import logging
import os
import re
import sys
import textwrap
import traceback
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from mcpgen.codegen import __version__
from mcpgen.extras import GENERATOR_DIST, missing_extra_line

if TYPE_CHECKING:  # for annotations only: the commands import the generator when they run
    from mcpgen.codegen.spec.model import Spec
    from mcpgen.codegen.targets.base import BuildContext, BuildOptions

Handler = Callable[[argparse.Namespace], int]

QUIET, NORMAL, VERBOSE = 0, 1, 2


class Ui:
    """Where the command's messages go, by verbosity: results always, progress unless
    ``-q``, details only with ``-v``; warnings and errors on stderr."""

    def __init__(self, verbosity: int = NORMAL) -> None:
        self.verbosity = verbosity

    def result(self, msg: str) -> None:
        print(msg, flush=True)

    def info(self, msg: str) -> None:
        if self.verbosity >= NORMAL:
            print(msg, flush=True)

    def detail(self, msg: str) -> None:
        if self.verbosity >= VERBOSE:
            print(msg, flush=True)

    def warn(self, msg: str) -> None:
        if self.verbosity >= NORMAL:
            print(f"warning: {msg}", file=sys.stderr, flush=True)

    def error(self, msg: str) -> None:
        print(f"codegen: error: {msg}", file=sys.stderr, flush=True)


ui = Ui()


def _err(msg: str) -> None:
    ui.error(msg)


def _load(spec: Path) -> Optional[Spec]:
    """Loads a spec, printing every error; None when it is invalid."""
    from mcpgen.codegen.spec.loader import SpecErrors, load_spec

    try:
        return load_spec(spec)
    except SpecErrors as exc:
        _print_spec_errors(spec, exc.errors)
        return None


def _print_spec_errors(spec: Path | str, errors: list[Any]) -> None:
    if len(errors) == 1 and errors[0].line == 0:  # the file could not be read: one line
        _err(errors[0].format())
        return
    for e in errors:
        print(e.format(), file=sys.stderr)
    n = len(errors)
    print(f"{spec}: {n} error{'s' if n != 1 else ''}", file=sys.stderr)


# ------------------------------------------------------------------------------- check


def _diagnostic(e: Any, severity: str = "error") -> dict[str, Any]:
    """One problem as the JSON object of ``codegen check --format json``."""
    if e.line == 0:
        code = "io"
    elif e.message.startswith("YAML syntax error"):
        code = "yaml-syntax"
    else:
        code = "spec"
    return {
        "severity": severity,
        "code": code,
        "file": e.file,
        "line": e.line,
        "column": e.column,
        "path": e.path,
        "message": e.message,
        "hint": e.hint,
    }


def _handler_warnings(spec: Any, spec_path: Path) -> list[Any]:
    """Tools without a handler, when the handlers file exists (else a build writes it)."""
    from mcpgen.codegen.targets import user_handlers as handlers

    path = handlers.handlers_path(spec_path)
    if not path.is_file():
        return []
    return handlers.describe_missing(spec, spec_path, handlers.missing_handlers(spec, path))


def _check_one(spec_path: Path) -> dict[str, Any]:
    from mcpgen.codegen.spec.loader import check_and_load

    spec, errors = check_and_load(spec_path)
    entry: dict[str, Any] = {
        "file": str(spec_path),
        "ok": not errors,
        "tools": None,
        "fingerprint": None,
        "diagnostics": [_diagnostic(e) for e in errors],
    }
    if spec is not None:
        entry["tools"] = len(spec.tools)
        entry["fingerprint"] = spec.fingerprint
        for m in _handler_warnings(spec, spec_path):
            entry["diagnostics"].append(
                {
                    "severity": "warning",
                    "code": "missing-handler",
                    "file": m.spec_file,
                    "line": m.line,
                    "column": m.column,
                    "path": "",
                    "message": f"tool `{m.tool}` has no handler in {Path(spec_path).stem}_handlers.cpp",
                    "hint": f"add: {m.signature} {{ ... }}",
                }
            )
        entry["_spec"] = spec
    entry["_errors"] = errors
    return entry


def _check_history(entry: dict[str, Any], spec_path: Path) -> None:
    """Adds the breaking changes since the spec's last release to a ``_check_one`` entry."""
    spec = entry.get("_spec")
    if spec is None:
        return
    from mcpgen.codegen.spec.history import HistoryErrors, load_history
    from mcpgen.codegen.spec.release_check import breaking_errors

    try:
        releases = load_history(spec_path, spec.device.name)
    except HistoryErrors as exc:
        problems = exc.errors
    else:
        problems = breaking_errors(spec, spec_path, releases[-1]) if releases else []
    if problems:
        entry["ok"] = False
        entry["_errors"] = problems
        for e in problems:
            code = "breaking" if e.file == str(spec_path) else "history"
            entry["diagnostics"].append(dict(_diagnostic(e), code=code))


def cmd_check(args: argparse.Namespace) -> int:
    entries = [_check_one(Path(p)) for p in args.spec]
    for entry, p in zip(entries, args.spec, strict=True):
        _check_history(entry, Path(p))
    ok = all(e["ok"] for e in entries)
    if args.format == "json":
        files = [{k: v for k, v in e.items() if not k.startswith("_")} for e in entries]
        print(json.dumps({"version": 1, "ok": ok, "files": files}, indent=2))
        return 0 if ok else 1
    for e in entries:
        if not e["ok"]:
            _print_spec_errors(e["file"], e["_errors"])
            continue
        for d in e["diagnostics"]:
            ui.warn(f"{d['file']}:{d['line']}:{d['column']}: {d['message']}\n  hint: {d['hint']}")
        n_events = len(e["_spec"].events)
        events = f", {n_events} event{'s' if n_events != 1 else ''}" if n_events else ""
        ui.info(f"{e['file']}: ok ({e['tools']} tools{events}, fingerprint {e['fingerprint']})")
        for tool in e["_spec"].tools:
            ui.detail(f"  {tool.name}  -> tools::{tool.handler}")
        for event in e["_spec"].events:
            ui.detail(f"  event {event.name}  -> mcpgen::events::emit_{event.name}")
    return 0 if ok else 1


# ------------------------------------------------------------------- release / diff


def cmd_release(args: argparse.Namespace) -> int:
    """Records the spec as a released version in its history folder (docs/cli.md)."""
    from mcpgen.codegen.spec.history import (
        HistoryErrors,
        history_dir,
        load_history,
        version_key,
        write_release,
    )
    from mcpgen.codegen.spec.locate import SpecLocator, read_text
    from mcpgen.codegen.spec.release_check import breaking_errors
    from mcpgen.codegen.spec.spec_errors import SpecError, excerpt

    spec_path = Path(args.spec)
    spec = _load(spec_path)
    if spec is None:
        return 1
    try:
        releases = load_history(spec_path, spec.device.name)
    except HistoryErrors as exc:
        _print_spec_errors(history_dir(spec_path), exc.errors)
        return 1
    version = spec.device.version
    text = read_text(str(spec_path))
    line, column = SpecLocator(str(spec_path), text).locate(("device", "version"))

    def refuse(message: str, hint: str) -> int:
        shown = excerpt(text, line, column)
        error = SpecError(str(spec_path), line, column, "device.version", message, hint, shown)
        _print_spec_errors(spec_path, [error])
        return 1

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", version):
        return refuse(
            f"version {version!r} cannot name a release file",
            "use a version like 1.2.0 (letters, digits, `.`, `-`, `+`)",
        )
    for r in releases:
        if r.fingerprint == spec.fingerprint:
            ui.info(
                f"{spec_path}: already released as {r.version} (fingerprint {r.fingerprint}); nothing written"
            )
            return 0
        if r.version == version:
            return refuse(
                f"version {version} is already released with another spec (fingerprint {r.fingerprint})",
                "raise device.version: a released version never changes",
            )
    if releases:
        last = releases[-1]
        if version_key(version) < version_key(last.version):
            return refuse(
                f"version {version} is older than the last release {last.version}",
                f"a new release needs a version above {last.version}",
            )
        problems = breaking_errors(spec, spec_path, last)
        if problems:
            _print_spec_errors(spec_path, problems)
            return 1
    path = write_release(spec_path, spec)
    ui.result(f"released {spec.device.name} {version} (fingerprint {spec.fingerprint}): {path}")
    ui.info("commit it with the spec; `codegen generate` puts every release in the bindings")
    return 0


def _diff_side(arg: str, role: str) -> tuple[Optional[Spec], list[Any]]:
    """A spec for ``codegen diff``: a YAML file, a release file (``.json``) or ``SPEC@VERSION``
    (``SPEC@last`` for the newest release)."""
    from mcpgen.codegen.spec.history import HistoryErrors, load_history, load_release
    from mcpgen.codegen.spec.loader import check_and_load
    from mcpgen.codegen.spec.spec_errors import SpecError

    if arg.endswith(".json"):
        try:
            return load_release(arg).spec, []
        except HistoryErrors as exc:
            return None, exc.errors
    if "@" in arg and not Path(arg).exists():
        spec_file, _, version = arg.rpartition("@")
        spec, errors = check_and_load(spec_file)
        if spec is None:
            return None, errors
        try:
            releases = load_history(spec_file, spec.device.name)
        except HistoryErrors as exc:
            return None, exc.errors
        pick = releases[-1:] if version == "last" else [r for r in releases if r.version == version]
        if not pick:
            known = ", ".join(r.version for r in releases) or "none"
            message = f"{role}: no release {version!r} (released: {known})"
            return None, [SpecError(spec_file, 0, 0, "", message)]
        return pick[0].spec, []
    return check_and_load(arg)


def cmd_diff(args: argparse.Namespace) -> int:
    """Classifies every change from OLD to NEW; exit 0 compatible, 1 breaking, 2 bad input."""
    from mcpgen.codegen.spec.evolution import diff_specs, locate_changes
    from mcpgen.codegen.spec.locate import SpecLocator, read_text

    old, old_errors = _diff_side(args.old, "OLD")
    new, new_errors = _diff_side(args.new, "NEW")
    errors = old_errors + new_errors
    if old is None or new is None:
        if args.format == "json":
            print(
                json.dumps(
                    {"version": 1, "ok": False, "changes": [], "errors": [_diagnostic(e) for e in errors]},
                    indent=2,
                )
            )
        else:
            _print_spec_errors(args.old if old_errors else args.new, errors)
        return 2
    new_file = new.source or args.new
    located = locate_changes(diff_specs(old, new), SpecLocator(new_file, read_text(new_file)))
    broken = sum(1 for lc in located if lc.change.breaking)
    if args.format == "json":
        print(
            json.dumps(
                {
                    "version": 1,
                    "ok": broken == 0,
                    "old": old.fingerprint,
                    "new": new.fingerprint,
                    "changes": [lc.as_json() for lc in located],
                    "errors": [],
                },
                indent=2,
            )
        )
        return 1 if broken else 0
    for lc in located:
        ui.result(lc.format())
    n = len(located)
    ui.info(f"{n} change{'s' if n != 1 else ''}, {broken} breaking ({old.fingerprint} -> {new.fingerprint})")
    return 1 if broken else 0


# ---------------------------------------------------------------------- generate / new


def generate_all(spec_path: Path, outdir: Path, log: Callable[[str], None] = print) -> Optional[object]:
    """Emits every generated file for a spec; writes the starter handlers once. None if invalid."""
    from mcpgen.codegen.emit import bundle
    from mcpgen.codegen.targets import user_handlers as handlers
    from mcpgen.codegen.targets.writer import write_tree

    spec = _load(spec_path)
    if spec is None:
        return None
    from mcpgen.codegen.errors import BuildError
    from mcpgen.codegen.spec.history import releases_of

    try:
        releases = releases_of(spec)
    except BuildError as exc:
        _err(str(exc))
        return None
    files = bundle.emit_all(spec, bundle.GENERATE, releases)
    written = write_tree(outdir, files)
    log(f"generated {len(files)} files in {outdir} ({len(written)} changed, fingerprint {spec.fingerprint})")
    handlers_file = handlers.ensure_handlers(spec, spec_path, log, check=False)
    _warn_missing_handlers(spec, spec_path, handlers_file)
    return spec


def _warn_missing_handlers(spec: Spec, spec_path: Path, handlers_file: Path) -> None:
    """``generate`` compiles nothing: a missing handler is a warning there, an error in ``build``."""
    from mcpgen.codegen.targets import user_handlers as handlers

    for m in handlers.describe_missing(spec, spec_path, handlers.missing_handlers(spec, handlers_file)):
        ui.warn(m.format())
    for o in handlers.orphaned_handlers(spec, handlers_file):
        ui.warn(o.format())
    for stale in handlers.stale_members(spec, handlers_file):
        ui.warn(stale.format())


def cmd_generate(args: argparse.Namespace) -> int:
    return 0 if generate_all(Path(args.spec), Path(args.output), ui.info) is not None else 1


def cmd_examples(args: argparse.Namespace) -> int:
    from mcpgen.codegen import example_specs

    specs = example_specs.copy_examples(args.name, Path(args.output), ui.info)
    ui.info(f"next: codegen build {specs[0]} --target host")
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    from mcpgen.codegen import example_specs
    from mcpgen.codegen.spec.names import device_slug
    from mcpgen.codegen.spec.starter import starter_spec

    directory = Path(args.directory)
    try:
        spec_path = directory / f"{device_slug(args.name)}.yaml"
        # The schema is copied beside the spec: a $schema line into site-packages would
        # break with the next virtual environment.
        text = starter_spec(args.name, schema_ref=f"./{example_specs.SCHEMA_NAME}")
    except ValueError as exc:
        _err(str(exc))
        return 1
    if spec_path.exists():
        _err(f"{spec_path} already exists; pick another name or directory")
        return 1
    directory.mkdir(parents=True, exist_ok=True)
    example_specs.place_schema(directory)
    spec_path.write_text(text, encoding="utf-8")
    ui.info(f"wrote {spec_path}")
    if args.output:
        if generate_all(spec_path, Path(args.output), ui.info) is None:
            return 1
    else:
        # Nothing generated beside the spec (a DIRECTORY/build left there went stale with the
        # first edit; `codegen build` writes build/<stem>/<target>): the starter handlers only.
        from mcpgen.codegen.targets import user_handlers as handlers

        spec = _load(spec_path)
        if spec is None:
            return 1
        handlers.ensure_handlers(spec, spec_path, ui.info, check=False)
    ui.info(f"next: edit {spec_path}, then `codegen build {spec_path} --target host`")
    ui.info(
        f"secrets (Wi-Fi password, tokens) go in {directory / 'secrets.yaml'} as `name: value` and "
        "are used as `!secret name` in the spec's firmware: section; keep that file out of git: "
        f"echo secrets.yaml >> {directory / '.gitignore'}"
    )
    return 0


# ------------------------------------------------------------------------------- build


def _default_out(spec: Path, target: str) -> Path:
    return Path("build") / spec.stem / target


def _add_missing_handlers(spec: Any, spec_path: Path) -> None:
    """``build --add-missing-handlers``: appends stubs for tools without a handler."""
    from mcpgen.codegen.targets import user_handlers as handlers

    handlers.ensure_handlers(spec, spec_path, ui.info, check=False)
    if not handlers.append_missing(spec, spec_path, ui.info):
        ui.info(f"{handlers.handlers_path(spec_path)}: every tool has a handler")


def _build_context(
    args: argparse.Namespace,
    target: str,
    options: Optional[BuildOptions] = None,
) -> Optional[BuildContext]:
    """The one context of a command that builds: the spec loaded and checked once (None when
    it is invalid: the errors are printed), its path, the build directory (``-o``, else
    ``build/<spec>/<target>``) and the options (progress to the command's output)."""
    from mcpgen.codegen.targets.base import BuildContext, BuildOptions

    spec_path = Path(args.spec)
    outdir = Path(args.output) if args.output else _default_out(spec_path, target)
    spec = _load(spec_path)
    if spec is None:
        return None
    return BuildContext(spec, spec_path, outdir, options or BuildOptions(log=ui.info))


def cmd_build(args: argparse.Namespace) -> int:
    from mcpgen.codegen.targets.base import BuildOptions
    from mcpgen.codegen.targets.registry import get_target
    from mcpgen.codegen.targets.user_handlers import MissingHandlersError

    options = BuildOptions(
        log=ui.info,
        verbose=ui.verbosity >= VERBOSE,
        quiet=ui.verbosity == QUIET,
        compile_bindings=not args.no_compile_bindings,
        run_pio=not args.no_pio,
    )
    ctx = _build_context(args, args.target, options)
    if ctx is None:
        return 1
    if args.add_missing_handlers:
        _add_missing_handlers(ctx.spec, ctx.spec_path)
    try:
        for built in get_target(args.target).build(ctx):
            ui.result(built.format())
        return 0
    except MissingHandlersError as exc:
        _err(str(exc).replace(" --add-missing-handlers", f" --target {args.target} --add-missing-handlers"))
        return 1


# ------------------------------------------------------------------- run / flash / monitor


def _port(args: argparse.Namespace) -> Optional[str]:
    """``--port`` as given, or (``auto``) the board found on USB; None (said why) when none is."""
    from mcpgen.codegen.run.ports import PortError, resolve_port

    try:
        return resolve_port(args.port, out=ui.info)
    except PortError as exc:
        _err(str(exc))
        return None


def cmd_run(args: argparse.Namespace) -> int:
    if getattr(args, "qemu", False):  # the ESP-IDF build in Espressif's QEMU (run/esp_qemu.py)
        from mcpgen.codegen.run.esp_qemu import CHIPS, run_esp_qemu

        if args.target not in CHIPS:
            _err(
                f"--qemu runs {' and '.join(sorted(CHIPS))} (Espressif's QEMU), not {args.target}: "
                "e.g. --target esp32c3 --qemu"
            )
            return 1
        ctx = _build_context(args, f"{args.target}-qemu")
        if ctx is None:
            return 1
        return run_esp_qemu(
            ctx, args.target, interactive=args.interactive, out=ui.result, timeout=args.timeout, error=_err
        )
    ctx = _build_context(args, args.target)
    if ctx is None:
        return 1
    from mcpgen.codegen.targets.esp32 import BOARDS

    if args.target in BOARDS:  # a real board: build, flash, monitor (run/board.py)
        from mcpgen.codegen.run.board import run_board

        return run_board(
            ctx, args.target, port=args.port, interactive=args.interactive, error=_err, timeout=args.timeout
        )
    from mcpgen.codegen.run.console import run_device

    return run_device(ctx, args.target, interactive=args.interactive, out=ui.result, timeout=args.timeout)


def cmd_flash(args: argparse.Namespace) -> int:
    ctx = _build_context(args, args.board)
    if ctx is None:
        return 1
    from mcpgen.codegen.run.flash import flash

    port = _port(args)
    if port is None:
        return 1
    return flash(ctx, args.board, port, use_esptool=args.esptool, error=_err)


def cmd_monitor(args: argparse.Namespace) -> int:
    from mcpgen.codegen.run.monitor import MonitorError, monitor

    elf = Path(args.elf) if args.elf else None
    if elf is None and args.spec:
        from mcpgen.codegen.targets.esp32 import project_dir

        spec_path = Path(args.spec)
        outdir = Path(args.output) if args.output else _default_out(spec_path, args.board)
        elf = project_dir(outdir) / ".pio" / "build" / args.board / "firmware.elf"
        if not elf.is_file():
            ui.warn(
                f"no firmware built at {elf}: panics will not be decoded "
                f"(build first: codegen build {spec_path} --target {args.board})"
            )
            elf = None
    port = _port(args)
    if port is None:
        return 1
    try:
        return monitor(port, baud=args.baud, board=args.board, elf=elf, no_reset=args.no_reset, log=ui.info)
    except MonitorError as exc:
        _err(str(exc))
        return 1


def cmd_demo(args: argparse.Namespace) -> int:
    import asyncio

    from mcpgen.codegen.run.demo import run_demo

    return asyncio.run(run_demo(Path(args.spec) if args.spec else None, Path(args.output)))


def cmd_completion(args: argparse.Namespace) -> int:
    from mcpgen.codegen.completion import CompletionUnavailable, script

    try:
        ui.result(script(args.shell))
    except CompletionUnavailable as exc:
        _err(str(exc))
        return 1
    return 0


def _log_level_from_verbosity(args: argparse.Namespace) -> None:
    """-v/-q move a server command's default --log-level (INFO) one step; a given level stays."""
    if ui.verbosity >= VERBOSE and getattr(args, "log_level", None) == "INFO":
        args.log_level = "DEBUG"
    elif ui.verbosity == QUIET and getattr(args, "log_level", None) == "INFO":
        args.log_level = "WARNING"


def cmd_bridge(args: argparse.Namespace) -> int:
    import asyncio

    from mcpgen.runtime.bridge.cli import run

    _log_level_from_verbosity(args)
    specs = _load_all(getattr(args, "spec", None) or [])
    if specs is None:
        return 1
    args.template_schemas = _template_schemas(specs)
    args.prompts = _prompts(specs)
    return asyncio.run(run(args))


def _load_all(paths: list[Path]) -> Optional[list[Spec]]:
    """``codegen bridge --spec``: the specs, or None after an error (printed)."""
    specs = []
    for path in paths:
        spec = _load(path)
        if spec is None:
            return None
        specs.append(spec)
    return specs


def _prompts(specs: list[Spec]) -> list[dict[str, Any]]:
    """``codegen bridge --spec``: the specs' prompts, as the bridge serves them."""
    from mcpgen.codegen.spec.prompt_json import prompts_json

    return [p for spec in specs for p in prompts_json(spec)]


def _template_schemas(specs: list[Spec]) -> dict[str, dict[str, dict[str, Any]]]:
    """``codegen bridge --spec``: each resource template's variables as JSON Schemas, for
    the bridge's ``completion/complete`` (a device lists its templates without them)."""
    from mcpgen.codegen.spec.mcp_json import param_schema

    out: dict[str, dict[str, dict[str, Any]]] = {}
    for spec in specs:
        for r in spec.resources:
            if r.uri_template is not None:
                out[r.uri_template] = {p.name: param_schema(p) for p in r.params}
    return out


def cmd_console(args: argparse.Namespace) -> int:
    try:
        from mcpgen.runtime.console.cli import run
    except ModuleNotFoundError as exc:
        # the console extra, whichever of its packages is missing (mcp is the bridge's too)
        line = missing_extra_line(exc.name, "the web console", dist=GENERATOR_DIST, extra="console")
        if line is None:  # not an extra's module: a bug, reported as one
            raise
        _err(line)
        return 1
    import asyncio

    _log_level_from_verbosity(args)
    fingerprints = _spec_fingerprints(getattr(args, "spec", None) or [])
    if fingerprints is None:
        return 1
    args.fingerprints = fingerprints
    return asyncio.run(run(args))


def _spec_fingerprints(paths: list[Path]) -> Optional[list[str]]:
    """``codegen console --spec``: the fingerprints the devices are checked against, each
    spec's and those of its released versions (``codegen release``); None after an error."""
    from mcpgen.codegen.errors import BuildError
    from mcpgen.codegen.spec.history import releases_of

    out: list[str] = []
    for path in paths:
        spec = _load(path)
        if spec is None:
            return None
        try:
            released = [r.fingerprint for r in releases_of(spec)]
        except BuildError as exc:
            _err(str(exc))
            return None
        out += [fp for fp in [*released, spec.fingerprint] if fp not in out]
    return out


def cmd_selftest(args: argparse.Namespace) -> int:
    from mcpgen.codegen.run.selftest import main

    spec = None
    if args.spec:
        spec = _load(Path(args.spec))
        if spec is None:
            return 1
    if args.port is not None:
        from mcpgen.codegen.run.ports import PortError, resolve_port

        try:  # "using /dev/ttyUSB0 (...)" on stderr: stdout may be the JSON report
            args.port = resolve_port(args.port, out=lambda msg: print(msg, file=sys.stderr, flush=True))
        except PortError as exc:
            _err(str(exc))
            return 1
    return main(args, spec=spec, print_line=ui.result)


def cmd_ota(args: argparse.Namespace) -> int:
    from mcpgen.codegen.run.ota import main

    return main(args)


# ------------------------------------------------------------------------------ parser


def _examples(text: str) -> str:
    return "examples:\n" + textwrap.indent(textwrap.dedent(text).strip(), "  ")


def _verbosity_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """-v/-q; a subcommand's own default is SUPPRESS so ``codegen -v build`` keeps its -v."""
    group = parser.add_argument_group("output")
    kw: dict[str, Any] = {} if top else {"default": argparse.SUPPRESS}
    group.add_argument(
        "-v",
        "--verbose",
        action="count",
        help="more detail: commands run, per-tool lines, "
        "DEBUG logs, tracebacks of unexpected errors (e.g. codegen build SPEC -v)",
        **({"default": 0} if top else kw),
    )
    group.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="only results and errors (e.g. codegen check -q toolspec/*.yaml)",
        **({"default": False} if top else kw),
    )


SPEC_HELP = "the tool spec YAML, e.g. toolspec/desk_lamp.yaml"
PORT_HELP = (
    "esp32*: the board's serial port, e.g. /dev/ttyUSB0, COM3 or socket://host:port; "
    "auto (the default) finds it by its USB id and asks when there are several"
)

# Building the parser stays fast (issue 43: `codegen --help`, `codegen check` and a Tab
# within 0.25 s): what needs the targets, the bridge (the MCP SDK, uvicorn), the console or
# the runtime is read the first time a command needs it, never when the parser is built.
# tests/cli/test_cli_start.py fails if building it imports any of those.


class _CommandParser(argparse.ArgumentParser):
    """A command's parser whose options may come from a module that is slow to import:
    ``defer(add)`` calls ``add(self)`` once, when this command is parsed or its help shown
    (or, for a Tab, by :func:`mcpgen.codegen.completion.complete`)."""

    _deferred: Optional[Callable[[argparse.ArgumentParser], None]] = None

    def defer(self, add: Callable[[argparse.ArgumentParser], None]) -> None:
        self._deferred = add

    def load_options(self) -> None:
        add, self._deferred = self._deferred, None
        if add is not None:
            add(self)

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        self.load_options()
        return super().parse_known_args(*args, **kwargs)

    def format_usage(self) -> str:
        self.load_options()
        return super().format_usage()

    def format_help(self) -> str:
        self.load_options()
        return super().format_help()


class _LazyNames(Collection[str]):
    """``choices`` read on first use (a parse that gives the option, its help, a Tab after it)."""

    def __init__(self, load: Callable[[], Iterable[str]]) -> None:
        self._load: Optional[Callable[[], Iterable[str]]] = load
        self._names: tuple[str, ...] = ()

    def _get(self) -> tuple[str, ...]:
        if self._load is not None:
            self._names, self._load = tuple(self._load()), None
        return self._names

    def __contains__(self, name: object) -> bool:
        return name in self._get()

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


def _target_names() -> tuple[str, ...]:
    from mcpgen.codegen.targets import registry

    return registry.names()


def _board_names() -> tuple[str, ...]:
    from mcpgen.codegen.targets.esp32 import BOARDS

    return tuple(BOARDS)


def _run_target_names() -> tuple[str, ...]:
    from mcpgen.codegen.run.console import runnable_targets

    return runnable_targets() + _board_names()  # esp32*: build, flash, monitor


def _describe_targets(p: argparse.ArgumentParser) -> None:
    from mcpgen.codegen.targets import registry

    p.description = (p.description or "") % {
        "targets": "\n".join(f"  {name:<12} {t.summary}" for name, t in registry.TARGETS.items())
    }


def _options_of(module: str) -> Callable[[argparse.ArgumentParser], None]:
    """A command's options, added from ``module.add_arguments`` only when the command is used
    (its help, its parsing or a Tab on it): the module may import what a plain start must not."""

    def add(p: argparse.ArgumentParser) -> None:
        importlib.import_module(module).add_arguments(p)

    return add


def build_parser() -> argparse.ArgumentParser:
    esp32_boards = _LazyNames(_board_names)
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
            codegen run toolspec/default_device.yaml --target host --interactive
            codegen demo
            """
        ),
    )
    parser.add_argument("--version", action="version", version=f"codegen {__version__}")
    _verbosity_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_CommandParser)
    sub.required = True

    def command(name: str, help: str, examples: str, description: Optional[str] = None) -> _CommandParser:
        p = sub.add_parser(
            name, help=help, description=description or help, formatter_class=fmt, epilog=_examples(examples)
        )
        _verbosity_options(p, top=False)
        return p

    p = command(
        "check",
        "validate specs",
        """
                codegen check toolspec/*.yaml
                codegen check --format json toolspec/desk_lamp.yaml   # for CI and editors
                """,
        "Validate specs; print every error with file:line:column, an excerpt and a hint. "
        "Tools without a handler in an existing SPEC_handlers.cpp are warnings.",
    )
    p.add_argument("spec", nargs="+", help="spec YAML files, e.g. toolspec/*.yaml")
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default) or json: one JSON document on stdout, shape in docs/cli.md (e.g. --format json)",
    )
    p.set_defaults(func=cmd_check)

    p = command(
        "release",
        "record the spec as a released version beside it",
        "codegen release toolspec/desk_lamp.yaml   # writes toolspec/desk_lamp.history/VERSION.json",
        "Append the spec (normalized) and its fingerprint to SPEC's history folder "
        "(SPEC.history/ beside it; commit it). Refused when device.version is already released "
        "with another spec, or when a breaking change since the last release comes without a "
        'major version bump. The bindings carry every release (policy="compatible").',
    )
    p.add_argument("spec", help=SPEC_HELP)
    p.set_defaults(func=cmd_release)

    p = command(
        "diff",
        "classify the changes between two versions of a spec",
        """
                codegen diff toolspec/desk_lamp.yaml@last toolspec/desk_lamp.yaml
                codegen diff old/desk_lamp.yaml toolspec/desk_lamp.yaml --format json
                """,
        "Print one line per change from OLD to NEW: NEW's file:line:col, compatible or breaking, "
        "the field path and why. OLD and NEW are spec files, release files (SPEC.history/V.json) "
        "or SPEC@VERSION (SPEC@last: the newest release). Exit 0: every change is compatible; "
        "1: a change is breaking; 2: bad input.",
    )
    p.add_argument("old", help="the older spec: FILE.yaml, SPEC.history/VERSION.json or SPEC@VERSION")
    p.add_argument("new", help="the newer spec, e.g. toolspec/desk_lamp.yaml")
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default) or json (one document on stdout, for CI)",
    )
    p.set_defaults(func=cmd_diff)

    p = command(
        "generate",
        "write device C++, Python bindings, tools.json and docs",
        "codegen generate toolspec/desk_lamp.yaml -o build/lamp",
        "Generate all sources for a spec. Unchanged files are not rewritten; "
        "the handlers file beside the spec is written once and never overwritten.",
    )
    p.add_argument("spec", help=SPEC_HELP)
    p.add_argument("-o", "--output", required=True, help="output directory, e.g. -o build/lamp")
    p.set_defaults(func=cmd_generate)

    p = command("new", "start a new device spec and handlers file", "codegen new my-robot --directory specs/")
    p.add_argument("name", help="device name, becomes serverInfo.name and NAME.yaml, e.g. my-robot")
    p.add_argument("--directory", default=".", help="where to write NAME.yaml (default: ., e.g. specs/)")
    p.add_argument(
        "-o",
        "--output",
        help="also generate the code into this directory (default: none; "
        "codegen build writes build/<stem>/<target>), e.g. -o build/my-robot",
    )
    p.set_defaults(func=cmd_new)

    p = command(
        "examples",
        "copy the example specs and their handlers out of the package",
        """
                codegen examples -o examples       # every example
                codegen examples desk_lamp         # one, into the current directory
                """,
        "Copy example specs (NAME.yaml), their handlers (NAME_handlers.cpp) and the "
        "editor schema into a folder, ready for `codegen build`.",
    )
    p.add_argument("name", nargs="*", help="example names (default: all), e.g. desk_lamp default_device")
    p.add_argument("-o", "--output", default=".", help="folder to copy into (default: ., e.g. -o examples)")
    p.set_defaults(func=cmd_examples)

    p = command(
        "build",
        "generate and compile firmware (and bindings for host)",
        """
                codegen build toolspec/default_device.yaml --target host -o build/sim
                codegen build toolspec/default_device.yaml --target qemu
                codegen build toolspec/desk_lamp.yaml --target esp32s3
                codegen build my_robot.yaml --add-missing-handlers   # after adding a tool
                """,
        "Generate and compile. Targets:\n%(targets)s"
        "\nA tool without a handler in SPEC_handlers.cpp stops the build before compiling.",
    )
    p.defer(_describe_targets)
    p.add_argument("spec", help=SPEC_HELP)
    p.add_argument(
        "--target",
        choices=_LazyNames(_target_names),
        default="host",
        metavar="TARGET",
        help="one of %(choices)s (default: host), e.g. --target esp32s3",
    )
    p.add_argument("-o", "--output", help="output directory (default: build/<spec>/<target>)")
    p.add_argument(
        "--no-pio",
        action="store_true",
        help="esp32*: only generate the PlatformIO project (e.g. to build it on another machine)",
    )
    p.add_argument(
        "--no-compile-bindings",
        action="store_true",
        help="host, python: leave the bindings as pure Python (faster; no C compiler needed)",
    )
    p.add_argument(
        "--add-missing-handlers",
        action="store_true",
        help="first append a starter stub to SPEC_handlers.cpp for every tool that has no "
        "handler (the rest of the file is left as it is)",
    )
    p.set_defaults(func=cmd_build)

    p = command(
        "run",
        "build, boot the device and talk to it",
        """
                codegen run toolspec/default_device.yaml --target host
                codegen run toolspec/default_device.yaml --target qemu --interactive
                codegen run toolspec/desk_lamp.yaml --target esp32c3 --port auto   # a real board
                codegen run toolspec/desk_lamp.yaml --target esp32c3 --qemu   # ESP-IDF + Espressif's QEMU
                """,
        "Build and start the device (host: the simulator on stdio; qemu, qemu-riscv32: "
        "the Cortex-M3 or RV32IMC image in QEMU), list its tools and call each with "
        "example arguments. With --interactive, keep it running and open a console: "
        "`tools`, `call NAME {json}` or `NAME key=value ...`, notifications as they come; "
        "`help` lists the commands. esp32, esp32s3, esp32c3: build, flash the board on --port "
        "(found on USB by default) and show its log.",
    )
    p.add_argument("spec", help=SPEC_HELP)
    # The same default as `codegen build`: the simulator needs no cross toolchain or QEMU.
    p.add_argument(
        "--target",
        choices=_LazyNames(_run_target_names),
        default="host",
        metavar="TARGET",
        help="one of %(choices)s (default: host, as for build), e.g. --target qemu",
    )
    p.add_argument(
        "-i",
        "--interactive",
        action="store_true",
        help="keep the device running and open a console (history in ~/.mcpgen_history)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        help="seconds to wait for each tool call (default: 10), e.g. --timeout 30",
    )
    p.add_argument("-o", "--output", help="build directory (default: build/<spec>/<target>)")
    p.add_argument("--port", default="auto", help=PORT_HELP)
    p.add_argument(
        "--qemu",
        action="store_true",
        help="esp32c3, esp32: build with your ESP-IDF (idf.py, serial transport) and boot it in "
        "Espressif's QEMU instead of flashing a board",
    )
    p.set_defaults(func=cmd_run)

    p = command(
        "flash",
        "upload firmware to a board",
        """
                codegen flash toolspec/default_device.yaml --board esp32s3 --port /dev/ttyUSB0
                codegen flash toolspec/default_device.yaml --port /dev/ttyACM0 --esptool
                """,
    )
    p.add_argument("spec", help=SPEC_HELP)
    p.add_argument(
        "--board",
        choices=esp32_boards,
        default="esp32",
        metavar="BOARD",
        help="one of %(choices)s (default: esp32), e.g. --board esp32s3",
    )
    p.add_argument("--port", default="auto", help=PORT_HELP)
    p.add_argument(
        "--esptool",
        action="store_true",
        help="write the images already built with esptool write-flash (no PlatformIO run)",
    )
    p.add_argument("-o", "--output", help="build directory (default: build/<spec>/<board>)")
    p.set_defaults(func=cmd_flash)

    p = command(
        "monitor",
        "show a board's serial log (esp-idf-monitor; decodes panics)",
        """
                codegen monitor --port /dev/ttyUSB0
                codegen monitor toolspec/desk_lamp.yaml --board esp32s3 --port /dev/ttyACM0
                """,
        "Open ESP-IDF's serial monitor on PORT. Given SPEC (and --board), the firmware "
        "built for it decodes panic backtraces. Ctrl-] quits.",
    )
    p.add_argument(
        "spec",
        nargs="?",
        help="optional: the spec whose built firmware decodes panics, e.g. toolspec/desk_lamp.yaml",
    )
    p.add_argument("--port", default="auto", help=PORT_HELP)
    p.add_argument(
        "--board",
        choices=esp32_boards,
        default="esp32",
        metavar="BOARD",
        help="chip of the board, for decoding: one of %(choices)s (default: esp32), e.g. --board esp32c3",
    )
    p.add_argument("--baud", type=int, default=115200, help="baud rate (default: 115200), e.g. --baud 460800")
    p.add_argument("--elf", help="firmware ELF to decode with, e.g. .pio/build/esp32/firmware.elf")
    p.add_argument("--no-reset", action="store_true", help="do not reset the chip when the monitor starts")
    p.add_argument("-o", "--output", help="build directory of SPEC (default: build/<spec>/<board>)")
    p.set_defaults(func=cmd_monitor)

    p = command(
        "demo", "build the default device, connect it over WebSocket, call every tool", "codegen demo"
    )
    p.add_argument("--spec", help="spec to demo (default: toolspec/default_device.yaml)")
    p.add_argument("-o", "--output", default="build/demo", help="build directory (default: build/demo)")
    p.set_defaults(func=cmd_demo)

    p = command(
        "completion",
        "print the shell completion script of codegen (bash, zsh or fish)",
        """
                eval "$(codegen completion bash)"     # in ~/.bashrc
                eval "$(codegen completion zsh)"      # in ~/.zshrc
                codegen completion fish > ~/.config/fish/completions/codegen.fish
                """,
    )
    p.add_argument("shell", choices=("bash", "zsh", "fish"), help="the shell, e.g. bash")
    p.set_defaults(func=cmd_completion)
    p = command(
        "ota",
        "roll devices onto a new firmware image over the air",
        """
                codegen ota build/lamp-v2/firmware/build/desk_lamp-sim --port 8765 --devices 10 --batch 2
                """,
        "Start a gateway, serve IMAGE over HTTP, wait for the devices, update them in batches "
        "(self.upgrade_firmware) and print one line per device: old -> new version and spec "
        "fingerprint, time, outcome (updated, rolled_back, failed, offline, skipped). Halts once "
        "more than --max-failures devices failed. Exit 0 when every device is on IMAGE. "
        "docs/ota.md.",
    )
    p.defer(_options_of("mcpgen.codegen.run.ota"))
    p.set_defaults(func=cmd_ota)

    p = command(
        "selftest",
        "check a device as an independent MCP client would (board, stdio or gateway)",
        """
                codegen selftest --device-cmd "build/sim/firmware/build/xiaozhi_sim-sim --stdio" \\
                    --spec toolspec/default_device.yaml
                codegen selftest --port auto --spec toolspec/desk_lamp.yaml --skip-tool self.light.set_power
                """,
        "Initialize and version negotiation, JSON-RPC error codes, the spec fingerprint, "
        "tools/list and its paging, every tool called in range and refused out of range, "
        "resources, events and latency: one line per check, a summary, exit 0 when none "
        "failed. Calling tools has effects on a real board: see --no-calls and --skip-tool. "
        'docs/firmware.md, "Self-test".',
    )
    p.defer(_options_of("mcpgen.codegen.run.selftest_args"))
    p.set_defaults(func=cmd_selftest)

    p = command(
        "bridge",
        "serve devices' tools to standard MCP clients",
        """
                codegen bridge --transport stdio \\
                    --device-cmd "build/demo/firmware/build/xiaozhi_sim-sim --stdio"
                codegen bridge --transport http --port 8808 --gateway-port 8765
                """,
    )

    def bridge_arguments(p: argparse.ArgumentParser) -> None:
        try:
            from mcpgen.runtime.bridge.cli import add_arguments
        except ImportError:  # without the bridge extra: take any options; cmd_bridge names the extra
            p.set_defaults(any_options=True)
        else:
            add_arguments(p)
            p.add_argument(
                "--spec",
                type=Path,
                action="append",
                default=[],
                metavar="YAML",
                help="a spec of served devices: completion/complete offers its resource "
                "templates' enum values (repeatable)",
            )

    p.defer(bridge_arguments)
    p.set_defaults(func=cmd_bridge)

    p = command(
        "console",
        "a web console: devices, their tools as forms, live events, /metrics",
        """
                codegen console --device-cmd "build/demo/firmware/build/xiaozhi_sim-sim --stdio"
                codegen console --port 8780 --gateway-port 8765 --auth-token-file secrets/device-token
                """,
    )

    def console_arguments(p: argparse.ArgumentParser) -> None:
        try:
            from mcpgen.runtime.console.cli import add_arguments as add_console_arguments
        except ImportError:  # without the console extra: take any options; cmd_console names the extra
            p.set_defaults(any_options=True)
        else:
            add_console_arguments(p)
            p.add_argument(
                "--spec",
                type=Path,
                action="append",
                default=[],
                metavar="YAML",
                help="a spec of the devices: each device is checked against its fingerprint "
                "and its released versions' (the page shows spec match or mismatch; "
                "repeatable)",
            )

    p.defer(console_arguments)
    p.set_defaults(func=cmd_console)
    return parser


# ------------------------------------------------------------------------------- errors


def describe_os_error(exc: OSError, args: Optional[argparse.Namespace] = None) -> str:
    """One line for an operating-system error, naming the file or port and the likely fix."""
    name = exc.filename or ""
    what = f"{name}: " if name else ""
    if type(exc).__name__ == "SerialException":  # pyserial's, without importing pyserial
        return f"serial port: {exc}"
    if isinstance(exc, FileNotFoundError):
        return f"{what}no such file or directory"
    if isinstance(exc, PermissionError):
        hint = ""
        if str(name).startswith("/dev/tty"):
            hint = " (serial ports: add yourself to the `dialout` group, then log in again)"
        return f"{what}permission denied{hint}"
    if exc.errno == errno.EADDRINUSE:
        detail = re.sub(r"^\[Errno \d+\] ", "", str(exc))
        port = getattr(args, "port", None)
        where = f" {getattr(args, 'host', None) or '127.0.0.1'}:{port}" if isinstance(port, int) else ""
        return f"port{where} busy: {detail} (another program listens there; choose another --port)"
    if exc.errno == errno.EBUSY:
        return f"{what}busy: another program (a serial monitor?) has it open"
    return f"{what}{exc.strerror or exc}"


def _configure_logging(verbosity: int) -> None:
    level = {QUIET: logging.ERROR, NORMAL: logging.WARNING}.get(verbosity, logging.DEBUG)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def main(argv: Optional[list[str]] = None) -> int:
    parser = build_parser()
    if argv is None:  # a Tab in a shell with `codegen completion` loaded: answer, exit
        from mcpgen.codegen.completion import complete

        complete(parser)
    args, unknown = parser.parse_known_args(argv)
    if unknown and not getattr(args, "any_options", False):
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")  # what parse_args says
    verbosity = QUIET if args.quiet else (VERBOSE if args.verbose else NORMAL)
    ui.verbosity = verbosity
    _configure_logging(verbosity)
    from mcpgen.codegen.errors import BuildError

    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `codegen ... | head`: the reader left; stop quietly
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so the exit flush cannot fail
        except OSError:
            pass
        return 1
    except BuildError as exc:  # compiler output and the like: may be several lines, no traceback
        _err(str(exc))
        return 1
    except Exception as exc:
        if verbosity >= VERBOSE:
            traceback.print_exc()
        if any(c.__name__ == "McpDeviceError" for c in type(exc).__mro__):  # no runtime import here
            _err(f"device: {type(exc).__name__}: {exc}")  # e.g. the simulator exited at start
        elif isinstance(exc, OSError):
            _err(describe_os_error(exc, args))
        elif isinstance(exc, ModuleNotFoundError) and missing_extra_line(exc.name, dist=GENERATOR_DIST):
            _err(str(missing_extra_line(exc.name, dist=GENERATOR_DIST)))  # e.g. pip install 'mcpgen[serial]'
        else:  # a bug: one line, and the traceback with -v
            _err(
                f"unexpected {type(exc).__name__}: {exc} "
                "(run with -v for the traceback, and please report it)"
            )
        return 1


if __name__ == "__main__":
    sys.exit(main())

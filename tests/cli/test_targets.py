"""Build targets: one registry the CLI reads, and each build reads the spec's YAML once."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest
from cli_testlib import copy_spec

from mcpgen.codegen import cli
from mcpgen.codegen.run.console import runnable_targets
from mcpgen.codegen.spec import loader
from mcpgen.codegen.targets import registry
from mcpgen.codegen.targets.base import Target

# A stand-in C++ compiler: writes the object, dependency file or executable it is asked
# for, so a host build runs every step of the driver in a fraction of a second.
FAKE_CXX = """\
import os, sys
args = sys.argv[1:]
for flag in ("-MF", "-o"):
    if flag in args:
        path = args[args.index(flag) + 1]
        if path != os.devnull:
            src = args[args.index("-c") + 1] if "-c" in args else ""
            with open(path, "w") as f:
                f.write(f"{path}: {src}\\n" if flag == "-MF" else "")
"""


@pytest.fixture
def fake_cxx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    gxx = bindir / "g++"
    gxx.write_text(f"#!{sys.executable}\n" + FAKE_CXX)
    gxx.chmod(gxx.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bindir}:{Path(sys.executable).parent}:/usr/bin:/bin")


@pytest.fixture
def yaml_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The YAML texts parsed, in order: every spec load composes the document once."""
    reads: list[str] = []
    compose = loader.compose

    def counting(text: str):  # noqa: ANN202 - whatever compose returns
        reads.append(text)
        return compose(text)

    monkeypatch.setattr(loader, "compose", counting)
    return reads


def test_the_cli_offers_exactly_the_registered_targets() -> None:
    parser = cli.build_parser()
    for name in registry.names():
        assert parser.parse_args(["build", "s.yaml", "--target", name]).target == name
    with pytest.raises(SystemExit):
        parser.parse_args(["build", "s.yaml", "--target", "no-such-target"])
    assert {"host", "qemu", "qemu-riscv32", "esp32", "esp32s3", "esp32c3", "xiaozhi", "python"} == set(
        registry.names()
    )
    assert set(runnable_targets()) == {"host", "qemu", "qemu-riscv32"}
    for name, target in registry.TARGETS.items():
        assert isinstance(target, Target) and target.name == name and target.summary
    with pytest.raises(ValueError, match="unknown target 'x'; expected one of host, "):
        registry.get_target("x")


def test_run_and_build_default_to_the_same_target(capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 31, item 15: `run` defaulted to qemu while `build` defaulted to host.
    parser = cli.build_parser()
    build_default = parser.parse_args(["build", "s.yaml"]).target
    assert build_default == "host"
    assert parser.parse_args(["run", "s.yaml"]).target == build_default
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--help"])
    assert "(default: host" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    ("target", "made"),
    [
        ("host", "simulator: "),
        ("python", "bindings: "),
        ("xiaozhi", "xiaozhi glue: "),
        ("esp32", "project: "),
    ],
)
def test_a_build_parses_the_spec_once(
    target: str,
    made: str,
    tmp_path: Path,
    fake_cxx: None,
    yaml_reads: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = copy_spec(tmp_path)
    argv = [
        "build",
        str(spec),
        "--target",
        target,
        "-o",
        str(tmp_path / "out"),
        "--no-compile-bindings",
        "--no-pio",
    ]
    assert cli.main(argv) == 0, capsys.readouterr().err
    assert len(yaml_reads) == 1
    assert made in capsys.readouterr().out


def test_a_driver_called_alone_loads_the_spec_itself(tmp_path: Path, yaml_reads: list[str]) -> None:
    from mcpgen.codegen.targets.xiaozhi import build_xiaozhi

    out = build_xiaozhi(copy_spec(tmp_path), tmp_path / "out", log=lambda _: None)
    assert (out / "README.md").is_file()
    assert len(yaml_reads) == 1


def test_an_invalid_spec_is_one_build_error_naming_the_file(tmp_path: Path) -> None:
    from mcpgen.codegen.errors import BuildError
    from mcpgen.codegen.targets.python import build_bindings

    spec = copy_spec(tmp_path, extra_yaml="  - name: self.bad\n")
    with pytest.raises(BuildError) as info:
        build_bindings(spec, tmp_path / "out", compile=False, log=lambda _: None)
    message = str(info.value)
    assert message.startswith(f"{spec}: 1 error in spec")
    assert f"{spec}:" in message.splitlines()[1]


def test_check_parses_each_spec_once(
    tmp_path: Path, yaml_reads: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["check", str(copy_spec(tmp_path))]) == 0
    assert len(yaml_reads) == 1
    assert "desk_lamp.yaml: ok" in capsys.readouterr().out


def test_add_missing_handlers_then_build_parses_the_spec_once(
    tmp_path: Path, yaml_reads: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from cli_testlib import NEW_TOOL

    spec = copy_spec(tmp_path, extra_yaml=NEW_TOOL)
    argv = ["build", str(spec), "--target", "xiaozhi", "-o", str(tmp_path / "out"), "--add-missing-handlers"]
    assert cli.main(argv) == 0, capsys.readouterr().err
    assert len(yaml_reads) == 1
    assert "fan_set_speed" in spec.with_name("desk_lamp_handlers.cpp").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("target", "made"), [("python", "bindings"), ("xiaozhi", "xiaozhi glue"), ("esp32", "project")]
)
def test_a_target_builds_from_its_context_without_reading_the_spec_again(
    target: str, made: str, tmp_path: Path, yaml_reads: list[str]
) -> None:
    from mcpgen.codegen.targets.base import BuildContext, BuildOptions

    spec = copy_spec(tmp_path)
    ctx = BuildContext.load(
        spec, tmp_path / "out", BuildOptions(log=lambda _: None, compile_bindings=False, run_pio=False)
    )
    spec.write_text("not: [a spec\n", encoding="utf-8")  # a build that read it again would fail
    built = registry.get_target(target).build(ctx)
    assert [b.label for b in built] == [made]
    assert built[0].path.is_dir() and built[0].path.is_relative_to(tmp_path / "out")
    assert len(yaml_reads) == 1


def test_an_unreadable_spec_is_a_build_error_when_the_context_is_made(tmp_path: Path) -> None:
    from mcpgen.codegen.errors import BuildError
    from mcpgen.codegen.targets.base import BuildContext

    missing = tmp_path / "nowhere.yaml"
    with pytest.raises(BuildError, match=f"^{missing}: "):
        BuildContext.load(missing, tmp_path / "out")


def test_every_generated_file_comes_from_the_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcpgen.codegen.emit import bundle, cpp, docs, python

    spec_path = copy_spec(tmp_path)
    spec = loader.load_spec(spec_path)
    files = bundle.emit_all(spec)
    assert files == {**cpp.emit(spec), **python.emit(spec), **docs.emit(spec)}
    assert bundle.emit(spec, "cpp") == cpp.emit(spec)
    # `codegen generate` writes exactly the bundle: nothing more, nothing else.
    out = tmp_path / "gen"
    assert cli.main(["generate", str(spec_path), "-o", str(out)]) == 0, capsys.readouterr().err
    written = {
        p.relative_to(out).as_posix(): p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file()
    }
    assert written == files
    with pytest.raises(KeyError, match="no emitted part 'rust'; expected one of cpp, python, docs"):
        bundle.emit(spec, "rust")

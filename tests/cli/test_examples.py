"""``codegen examples`` copies the packaged examples out; ``codegen new`` puts the schema beside the spec."""

from __future__ import annotations

from pathlib import Path

from cli_testlib import SPECS, codegen

from mcpgen.codegen import resources


def test_examples_copies_every_spec_with_its_handlers_and_the_schema(tmp_path: Path) -> None:
    proc = codegen("examples", "-o", "ex", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    copied = sorted(p.name for p in (tmp_path / "ex").iterdir())
    assert copied == [
        "default_device.yaml",
        "default_device_handlers.cpp",
        "desk_lamp.yaml",
        "desk_lamp_handlers.cpp",
        "toolspec.schema.json",
    ]
    for name in copied:
        assert (tmp_path / "ex" / name).read_bytes() == (SPECS / name).read_bytes(), name
    # The copied specs are valid where they land, their handlers beside them.
    check = codegen("check", "ex/desk_lamp.yaml", "ex/default_device.yaml", cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "next: codegen build ex/default_device.yaml --target host" in proc.stdout + proc.stderr


def test_examples_keeps_edited_files_and_names_unknown_examples(tmp_path: Path) -> None:
    assert codegen("examples", "desk_lamp", cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "desk_lamp.yaml",
        "desk_lamp_handlers.cpp",
        "toolspec.schema.json",
    ]
    assert codegen("examples", "desk_lamp", cwd=tmp_path).returncode == 0  # same content: fine
    handlers = tmp_path / "desk_lamp_handlers.cpp"
    handlers.write_text("// my edits\n", encoding="utf-8")
    proc = codegen("examples", "desk_lamp", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        f"codegen: error: {Path('desk_lamp_handlers.cpp')} exists and differs "
        "from the example; keep your edits and copy elsewhere with -o DIR "
        "(e.g. -o examples)"
    )
    assert handlers.read_text(encoding="utf-8") == "// my edits\n"
    proc = codegen("examples", "no_such", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        "codegen: error: no example named 'no_such'; the examples are: "
        "default_device, desk_lamp (e.g. codegen examples desk_lamp)"
    )


def test_new_spec_names_the_schema_copied_beside_it(tmp_path: Path) -> None:
    proc = codegen("new", "my-fan", "--directory", "specs", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    spec = tmp_path / "specs" / "my_fan.yaml"
    # Before: $schema=file:///.../site-packages/mcpgen/toolspec/toolspec.schema.json
    assert spec.read_text(encoding="utf-8").splitlines()[0] == (
        "# yaml-language-server: $schema=./toolspec.schema.json"
    )
    assert (tmp_path / "specs" / "toolspec.schema.json").read_bytes() == resources.spec_schema().read_bytes()


def test_new_leaves_no_generated_tree_beside_the_spec(tmp_path: Path) -> None:
    # It wrote specs/build/, which went stale with the first edit of the spec.
    proc = codegen("new", "my-fan", "--directory", "specs", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "specs").iterdir()) == [
        "my_fan.yaml",
        "my_fan_handlers.cpp",
        "toolspec.schema.json",
    ]
    assert not (tmp_path / "build").exists()
    proc = codegen("new", "my-box", "--directory", "specs", "-o", "gen", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "gen").is_dir() and not (tmp_path / "specs" / "build").exists()

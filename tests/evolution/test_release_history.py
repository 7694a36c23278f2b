"""`codegen release` writes the history beside the spec; `codegen check` holds the spec to its
last release; a damaged or foreign history is one located error and nothing is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mcpgen.codegen.cli import main
from mcpgen.codegen.spec.history import history_dir, load_history, release_text
from mcpgen.codegen.spec.loader import load_spec

REPO = Path(__file__).resolve().parents[2]
V1 = REPO / "toolspec" / "desk_lamp.yaml"
V2 = Path(__file__).with_name("desk_lamp_v2.yaml")


@pytest.fixture
def lamp(tmp_path: Path) -> Path:
    """A copy of desk_lamp.yaml (v1) with its release 0.3.1 recorded."""
    spec = tmp_path / "desk_lamp.yaml"
    shutil.copy(V1, spec)
    assert main(["release", str(spec)]) == 0
    return spec


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_release_writes_a_deterministic_reviewable_file(lamp: Path) -> None:
    folder = history_dir(lamp)
    assert sorted(p.name for p in folder.iterdir()) == ["0.3.1.json"]
    text = (folder / "0.3.1.json").read_text(encoding="utf-8")
    spec = load_spec(lamp)
    assert text == release_text(spec)
    doc = json.loads(text)
    assert doc["fingerprint"] == spec.fingerprint and doc["version"] == "0.3.1"
    assert doc["spec"] == spec.canonical()
    assert text.count("\n") > 50  # one key per line: a review sees each field
    assert main(["release", str(lamp)]) == 0  # the same spec again: nothing new
    assert sorted(p.name for p in folder.iterdir()) == ["0.3.1.json"]
    [release] = load_history(lamp, "desk-lamp")
    assert release.spec == spec and release.fingerprint == spec.fingerprint


def test_a_compatible_release_appends_one_file(lamp: Path) -> None:
    shutil.copy(V2, lamp)
    assert main(["check", str(lamp)]) == 0
    assert main(["release", str(lamp)]) == 0
    assert [r.version for r in load_history(lamp, "desk-lamp")] == ["0.3.1", "0.4.0"]


def test_check_refuses_a_breaking_change_without_a_major_bump(
    lamp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # set_rgb's `b` (the first; self.light.fade has one too)
    text = V2.read_text(encoding="utf-8").replace("      b: {type: integer, min: 0, max: 255}\n", "", 1)
    lamp.write_text(text, encoding="utf-8")
    before = _files(history_dir(lamp))
    assert main(["check", str(lamp)]) == 1
    err = capsys.readouterr().err
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "- name: self.light.set_rgb" in s) + 3
    assert f"{lamp}:{line}:" in err
    assert "breaking change since release 0.3.1: parameter `b` removed" in err
    assert "raise device.version's major number (0.4.0 -> 1.0.0)" in err and "or undo the change" in err
    assert main(["check", "--format", "json", str(lamp)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [d["code"] for d in report["files"][0]["diagnostics"]] == ["breaking"]
    assert main(["release", str(lamp)]) == 1  # release refuses it too, and writes nothing
    assert _files(history_dir(lamp)) == before
    lamp.write_text(text.replace("version: 0.4.0", "version: 1.0.0"), encoding="utf-8")
    assert main(["check", str(lamp)]) == 0
    assert main(["release", str(lamp)]) == 0
    assert sorted(_files(history_dir(lamp))) == ["0.3.1.json", "1.0.0.json"]


def test_a_released_version_never_changes(lamp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lamp.write_text(
        V1.read_text(encoding="utf-8").replace("Wi-Fi RGB desk lamp.", "A lamp."), encoding="utf-8"
    )  # noqa: E501
    before = _files(history_dir(lamp))
    assert main(["release", str(lamp)]) == 1
    err = capsys.readouterr().err
    assert f"{lamp}:5:3: device.version: version 0.3.1 is already released" in err
    assert _files(history_dir(lamp)) == before


def test_diff_against_a_release(lamp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(V2, lamp)
    assert main(["diff", f"{lamp}@last", str(lamp)]) == 0
    out = capsys.readouterr().out
    assert "3 changes, 0 breaking" in out
    release = history_dir(lamp) / "0.3.1.json"
    assert main(["diff", str(release), str(lamp), "--format", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["changes"]) == 3
    assert main(["diff", f"{lamp}@9.9.9", str(lamp)]) == 2
    assert "no release '9.9.9' (released: 0.3.1)" in capsys.readouterr().err


def test_a_corrupted_history_is_one_located_error(lamp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    release = history_dir(lamp) / "0.3.1.json"
    lines = release.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[6] = lines[6].replace(",", "", 1) if "," in lines[6] else lines[6] + "}"
    release.write_text("".join(lines), encoding="utf-8")
    before = _files(history_dir(lamp))
    shutil.copy(V2, lamp)
    assert main(["check", str(lamp)]) == 1
    err = capsys.readouterr().err
    assert f"{release}:" in err and "not valid JSON" in err and "restore it from version control" in err
    assert err.count("error") <= 2
    assert main(["release", str(lamp)]) == 1
    assert main(["diff", f"{lamp}@last", str(lamp)]) == 2
    assert f"{release}:" in capsys.readouterr().err
    out = lamp.parent / "out"
    assert main(["generate", str(lamp), "-o", str(out)]) == 1  # the bindings need the history
    assert "release history is damaged" in capsys.readouterr().err and not out.exists()
    assert _files(history_dir(lamp)) == before


def test_an_edited_release_is_caught_by_its_fingerprint(
    lamp: Path, capsys: pytest.CaptureFixture[str]
) -> None:  # noqa: E501
    release = history_dir(lamp) / "0.3.1.json"
    release.write_text(
        release.read_text(encoding="utf-8").replace('"maximum": 720', '"maximum": 700'), encoding="utf-8"
    )
    assert main(["check", str(lamp)]) == 1
    err = capsys.readouterr().err
    line = next(
        i for i, s in enumerate(release.read_text().splitlines(), 1) if s.startswith('  "fingerprint"')
    )  # noqa: E501
    assert f"{release}:{line}:3: fingerprint: the recorded spec hashes to" in err and "was edited" in err


def test_a_history_from_another_device_is_refused(
    lamp: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    spec = other / "desk_lamp.yaml"
    spec.write_text(
        V1.read_text(encoding="utf-8").replace("name: desk-lamp", "name: hall-lamp"), encoding="utf-8"
    )  # noqa: E501
    shutil.copytree(history_dir(lamp), history_dir(spec))
    before = _files(history_dir(spec))
    assert main(["check", str(spec)]) == 1
    err = capsys.readouterr().err
    assert (
        f"{history_dir(spec) / '0.3.1.json'}:2:3: device: "
        "this release is of device 'desk-lamp', not 'hall-lamp'" in err
    )  # noqa: E501
    assert main(["release", str(spec)]) == 1
    assert _files(history_dir(spec)) == before


def test_the_commands_of_the_docs_run_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/cli.md's release/diff block, run in a copy of toolspec/ (it writes a history)."""
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text.split("## `codegen release` and `codegen diff`", 1)[1]
    block = section.split("```", 2)[1]  # the fence may name a language (```sh)
    commands = [line.split("#")[0].split() for line in block.splitlines() if line.startswith("codegen ")]
    assert [c[1] for c in commands] == ["release", "diff", "diff"]
    shutil.copytree(REPO / "toolspec", tmp_path / "toolspec")
    monkeypatch.chdir(tmp_path)
    for argv in commands:
        assert main(argv[1:]) == 0, argv
    assert (tmp_path / "toolspec" / "desk_lamp.history" / "0.3.1.json").is_file()
    assert '"changes": []' in capsys.readouterr().out

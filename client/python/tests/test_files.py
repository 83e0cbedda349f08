"""Files in and out, with `pybox exec --in/--out`'s rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import pybox
from conftest import run_cli

WRITER = ("import os\nos.makedirs('out/sub', exist_ok=True)\n"
          "open('out/a.txt', 'w').write(open('data.txt').read().upper())\n"
          "open('out/sub/b.bin', 'wb').write(bytes(range(256)))\n")


def test_inputs_from_a_mapping_are_placed_and_outputs_come_back_written_to_out_dir(daemon: pybox.Client,
                                                                                   tmp_path: Path) -> None:
    result = pybox.run(WRITER, files={"data.txt": "hello"}, out_dir=tmp_path)
    assert result.ok, result.stderr_bytes
    assert (tmp_path / "a.txt").read_bytes() == b"HELLO"
    assert (tmp_path / "sub" / "b.bin").read_bytes() == bytes(range(256))
    assert {f.name: f.outcome for f in result.files} == {"a.txt": pybox.Outcome.WRITTEN,
                                                          "sub/b.bin": pybox.Outcome.WRITTEN}
    assert result.receipt.files is not None
    assert [entry.name for entry in result.receipt.files.inputs] == ["data.txt"]
    assert sorted(entry.name for entry in result.receipt.files.outputs) == ["a.txt", "sub/b.bin"]


def test_existing_files_are_kept_unless_force_and_never_a_link(daemon: pybox.Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("mine")
    (tmp_path / "sub").mkdir()
    os.symlink("/etc/passwd", tmp_path / "sub" / "b.bin")
    result = pybox.run(WRITER, files={"data.txt": "x"}, out_dir=tmp_path)
    outcomes = {f.name: f for f in result.files}
    assert outcomes["a.txt"].outcome == pybox.Outcome.KEPT_EXISTING
    assert (tmp_path / "a.txt").read_text() == "mine"
    assert outcomes["sub/b.bin"].outcome == pybox.Outcome.FAILED and "link" in outcomes["sub/b.bin"].reason
    forced = pybox.run(WRITER, files={"data.txt": "x"}, out_dir=tmp_path, force=True)
    assert {f.name: f.outcome for f in forced.files}["a.txt"] == pybox.Outcome.WRITTEN
    assert (tmp_path / "a.txt").read_text() == "X"
    assert os.path.islink(tmp_path / "sub" / "b.bin")
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".pybox-")]


def test_inputs_from_paths_follow_the_clis_rules_and_give_the_same_run(daemon: pybox.Client, tmp_path: Path,
                                                                       pybox_cli: str) -> None:
    folder = tmp_path / "folder"
    (folder / "deep").mkdir(parents=True)
    (folder / "one.txt").write_text("1")
    (folder / "deep" / "two.txt").write_text("22")
    single = tmp_path / "single.csv"
    single.write_text("a,b\n")
    program = ("import os\nfor root, _, names in sorted(os.walk('.')):\n"
               "    for n in sorted(names): print(os.path.join(root, n), os.path.getsize(os.path.join(root, n)))\n")
    result = pybox.run(program, files=[single, str(folder) + "/"])
    cli = run_cli(pybox_cli, "exec", "-", "--in", str(single), "--in", str(folder) + "/", stdin=program.encode())
    assert result.stdout_bytes == cli.stdout
    assert b"./folder/deep/two.txt 2\n" in result.stdout_bytes and b"./single.csv 4\n" in result.stdout_bytes


def test_a_link_inside_an_input_folder_is_refused_before_sending(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    os.symlink("/etc/passwd", folder / "link")
    with pytest.raises(pybox.InvalidArgument) as caught:
        pybox.Client(socket_path="/nonexistent").run("print(1)", files=[folder])
    assert caught.value.code == "input_files_invalid" and "symbolic link" in caught.value.message


def test_a_missing_input_is_refused_before_sending(tmp_path: Path) -> None:
    with pytest.raises(pybox.InvalidArgument) as caught:
        pybox.Client(socket_path="/nonexistent").run("print(1)", files=[tmp_path / "nope"])
    assert caught.value.code == "file_missing"


def test_outputs_without_out_dir_are_not_asked_for(daemon: pybox.Client) -> None:
    result = pybox.run(WRITER, files={"data.txt": "x"})
    assert result.files == []
    assert result.receipt.files is not None

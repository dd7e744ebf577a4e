"""File names that are not valid UTF-8 round-trip through the tools: shown as ``\\xNN`` in
output, accepted as ``\\xNN`` in path arguments, and headless output stays valid UTF-8."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.tools.base import ToolContext, ToolError
from agent.tools.bash import BashArgs, BashTool
from agent.tools.edit import EditArgs, EditTool
from agent.tools.glob_tool import GlobArgs, GlobTool
from agent.tools.grep import GrepArgs, GrepTool
from agent.tools.names import parse_name, show_bytes, show_name
from agent.tools.read import ReadArgs, ReadTool
from agent.tools.write import WriteArgs, WriteTool

ROOT = Path(__file__).resolve().parents[2]
LATIN1_NAME = b"caf\xe9.txt"  # "café.txt" in latin-1: not valid UTF-8


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return tmp_path.resolve()


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    return ToolContext(workspace=ws, output_dir=ws.parent / "saved")


def make_latin1_file(ws: Path, content: bytes = b"bonjour\n") -> Path:
    raw = os.fsencode(ws) + b"/" + LATIN1_NAME
    with open(raw, "wb") as handle:
        handle.write(content)
    return Path(os.fsdecode(raw))


@pytest.mark.parametrize("raw", [b"caf\xe9.txt", b"plain.txt", b"a\\xe9.txt", b"a\\x5c\xff", b"\xc3\xa9t\xe9",
                                 b"back\\slash", b"\\x41"])
def test_show_name_and_parse_name_round_trip(raw):
    name = os.fsdecode(raw)
    shown = show_name(name)
    shown.encode("utf-8")  # valid UTF-8 text
    assert parse_name(shown) == name


def test_show_name_writes_non_utf8_bytes_as_backslash_x():
    assert show_name(os.fsdecode(b"caf\xe9.txt")) == "caf\\xe9.txt"
    assert show_name("café.txt") == "café.txt"
    assert show_bytes(b"ok \xff\n") == "ok \\xff\n"


def test_parse_name_of_escaped_utf8_bytes_names_the_same_file():
    assert parse_name("caf\\xc3\\xa9.txt") == "café.txt"


def test_glob_shows_a_non_utf8_name_as_backslash_x_and_read_opens_it(ctx, ws):
    make_latin1_file(ws)
    listed = GlobTool().run(GlobArgs(pattern="*.txt"), ctx).text
    assert "caf\\xe9.txt" in listed and "\ufffd" not in listed
    out = ReadTool().run(ReadArgs(path="caf\\xe9.txt"), ctx)
    assert out.text.startswith("     1\tbonjour")
    assert out.metadata["path"] == "caf\\xe9.txt"
    assert GlobTool().run(GlobArgs(pattern="caf\\xe9*"), ctx).text.startswith("caf\\xe9.txt")


def test_write_and_edit_accept_a_backslash_x_path(ctx, ws):
    out = WriteTool().run(WriteArgs(path="caf\\xe9.txt", content="one\n"), ctx)
    assert (os.fsencode(ws) + b"/" + LATIN1_NAME) in [os.fsencode(p) for p in ws.iterdir()]
    assert "caf\\xe9.txt" in out.text
    json.dumps(out.metadata, ensure_ascii=False).encode("utf-8")
    edited = EditTool().run(EditArgs(path="caf\\xe9.txt", old_string="one", new_string="two"), ctx)
    assert "caf\\xe9.txt" in edited.text and edited.diff and "caf\\xe9.txt" in edited.diff
    assert Path(os.fsdecode(os.fsencode(ws) + b"/" + LATIN1_NAME)).read_text() == "two\n"


def test_a_missing_file_hint_shows_close_names_escaped(ctx, ws):
    make_latin1_file(ws)
    with pytest.raises(ToolError) as info:
        ReadTool().run(ReadArgs(path="cafe.txt"), ctx)
    assert "caf\\xe9.txt" in str(info.value)
    str(info.value).encode("utf-8")


def test_bash_output_shows_non_utf8_bytes_as_backslash_x(ctx, ws):
    make_latin1_file(ws)
    out = BashTool().run(BashArgs(command="ls; printf '\\033[31mred\\033[0m \\377\\n'"), ctx)
    assert "caf\\xe9.txt" in out.text and "red \\xff" in out.text and "\ufffd" not in out.text
    assert "\x1b" not in out.text
    assert out.display is not None and "\x1b[31m" in out.display and "\\xff" in out.display


@pytest.mark.parametrize("engine", ["python", "rg"])
def test_grep_result_paths_show_non_utf8_names_as_backslash_x(ctx, ws, engine):
    from agent.tools.grep import find_ripgrep

    if engine == "rg" and find_ripgrep() is None:
        pytest.skip("ripgrep cannot run here")
    make_latin1_file(ws)
    out = GrepTool(use_ripgrep=False if engine == "python" else None).run(GrepArgs(pattern="bonjour"), ctx)
    assert "caf\\xe9.txt:1:bonjour" in out.text


def test_headless_json_output_with_non_utf8_names_is_valid_utf8(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    make_latin1_file(ws.resolve())
    replies = [
        {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}},
                        {"name": "bash", "arguments": {"command": "ls"}},
                        {"name": "grep", "arguments": {"pattern": "bonjour"}},
                        {"name": "read", "arguments": {"path": "caf\\xe9.txt"}},
                        {"name": "write", "arguments": {"path": "caf\\xe9.txt", "content": "salut\n"}}]},
        {"content": "done"},
    ]
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps(replies))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from tui.cli import main; sys.exit(main())", "run", "task",
         "--output-format", "json", "--replay", str(replay), "-C", str(ws), "--model", "openai/gpt-4.1",
         "--permission-mode", "full-auto"],
        capture_output=True, env=env, cwd=str(ROOT), timeout=120)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    text = proc.stdout.decode("utf-8")  # strict: raises on any byte that is not UTF-8
    events = [json.loads(line) for line in text.splitlines()]
    outputs = [e["output"] for e in events if e["type"] == "tool_call_finished"]
    assert len(outputs) == 5 and not any(e["is_error"] for e in events if e["type"] == "tool_call_finished")
    assert all("caf\\xe9.txt" in out for out in outputs[:3]), outputs
    assert "bonjour" in outputs[3]
    assert (os.fsencode(ws) + b"/" + LATIN1_NAME) in [os.fsencode(p) for p in ws.iterdir()]


def test_the_json_printer_writes_a_surrogate_escaped_byte_as_valid_utf8():
    import io

    from agent.events import Notice
    from tui.headless import JsonPrinter

    out = io.StringIO()
    JsonPrinter(out)(Notice(message="saw " + os.fsdecode(b"caf\xe9.txt")))
    line = out.getvalue()
    line.encode("utf-8")  # strict
    assert json.loads(line)["message"] == "saw caf\\xe9.txt"


def test_an_escaped_name_of_a_symlink_into_dot_git_is_still_protected(ws):
    from agent.permissions.policy import touches_protected_path
    from agent.tools.base import Capability

    (ws / ".git" / "hooks").mkdir(parents=True)
    os.symlink(os.fsencode(ws / ".git" / "hooks"), os.fsencode(ws) + b"/h\xe9")
    arguments = {"path": "h\\xe9/pre-commit", "content": "#!/bin/sh\n"}
    assert touches_protected_path(Capability.MUTATING, arguments, ws)


def test_undo_restores_a_file_written_through_its_escaped_name(ws):
    from agent.session.checkpoints import Checkpoints

    target = make_latin1_file(ws, b"before\n")
    cp = Checkpoints(ws, "s1", root=ws.parent / "checkpoints")
    cp.start_turn()
    assert cp.before_change("caf\\xe9.txt") is None
    target.write_bytes(b"after\n")
    assert cp.undo_last_turn() == ["restored caf\\xe9.txt"]
    assert target.read_bytes() == b"before\n"


def test_an_external_change_to_a_file_noted_by_its_escaped_name_is_seen(ws):
    from agent.loop.reminders import ReadFileStamps

    target = make_latin1_file(ws, b"before\n")
    stamps = ReadFileStamps(ws)
    stamps.note("caf\\xe9.txt")
    target.write_bytes(b"changed outside, longer\n")
    assert stamps.changed() == ["caf\\xe9.txt"]


@pytest.mark.parametrize("engine", ["python", "rg"])
def test_grep_shows_non_utf8_bytes_inside_matched_lines_as_backslash_x(ctx, ws, engine):
    from agent.tools.grep import find_ripgrep

    if engine == "rg" and find_ripgrep() is None:
        pytest.skip("ripgrep cannot run here")
    (ws / "notes.txt").write_bytes(b"bonjour caf\xe9 du matin\n")
    out = GrepTool(use_ripgrep=False if engine == "python" else None).run(GrepArgs(pattern="bonjour"), ctx)
    assert "notes.txt:1:bonjour caf\\xe9 du matin" in out.text and "\ufffd" not in out.text


def test_the_interrupted_call_stand_in_names_files_with_backslash_x():
    from agent.session.interrupted import interrupted_text

    text = interrupted_text("bash", [os.fsdecode(b"caf\xe9.txt")], [os.fsdecode(b"caf\xe9.txt")])
    assert "caf\\xe9.txt" in text and "\udce9" not in text
    text.encode("utf-8")  # valid UTF-8 for the model and the journal

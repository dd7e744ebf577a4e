"""Secrets stay out of the files the app writes: redaction by value and by pattern, private modes,
saved outputs outside the workspace, and commands without the app's secrets."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

from agent.config.files import user_data_dir
from agent.secrets.redact import Redactor
from agent.secrets.stream import StreamRedactor
from agent.session.records import read_journal
from agent.tools.base import ToolContext, ToolError
from agent.tools.bash import BashArgs, BashTool
from agent.tools.read import ReadArgs, ReadTool
from agent.tools.write import WriteArgs, WriteTool
from tests.helpers import Recorder, make_session

SK = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
AWS = "AKIAIOSFODNN7EXAMPLE"
GH = "ghp_" + "a1B2" * 9
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7\nQWERTYqwerty123\n-----END RSA PRIVATE KEY-----"
SHA = "3f786850e387550fdab836ed7e6dc881de23001b"
SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_redaction_by_pattern_and_by_value_keeps_hashes():
    redactor = Redactor(environ={"MY_SERVICE_TOKEN": "tok-value-123456", "HOME": "/home/me"})
    text = (f"echo {SK}\nDATABASE_URL=postgres://app:hunter2pass@db:5432/app\n{AWS} {GH}\n{PEM}\n"
            f"using tok-value-123456 at /home/me, commit {SHA} digest {SHA256}")
    out = redactor.text(text)
    for secret in (SK, "hunter2pass", AWS, GH, "MIIEowIBAAKCAQEAx7", "tok-value-123456"):
        assert secret not in out
    assert "postgres://app:[redacted URL password]@db:5432/app" in out
    assert "[redacted MY_SERVICE_TOKEN]" in out and "/home/me" in out
    assert SHA in out and SHA256 in out  # no entropy detectors: hashes and git SHAs stay
    assert redactor.data(text.encode()).decode() == out


def test_stream_redaction_finds_secrets_split_across_chunks():
    stream = StreamRedactor(Redactor(environ={}))
    data = f"line one\nkey {SK} end\n{PEM}\ntail".encode()
    out = b"".join(stream.feed(data[i:i + 7]) for i in range(0, len(data), 7)) + stream.flush()
    assert SK.encode() not in out and b"QWERTY" not in out
    assert out.startswith(b"line one\nkey [redacted API key] end\n") and out.endswith(b"tail")


def test_saved_output_is_redacted_private_and_outside_the_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-value-123456")
    command = f"echo {SK}; echo tok-value-123456; seq 1 30000"
    session, provider = make_session(tmp_path, [
        {"tool_calls": [{"name": "bash", "arguments": {"command": command}, "id": "c1"}]}, {"content": "ok"}])
    rec = Recorder()
    session.run_turn("go", rec, threading.Event())
    (finished,) = [e for e in rec.events if getattr(e, "type", "") == "tool_call_finished"]
    saved = Path(finished.saved_path)
    assert finished.truncated
    assert session.workspace not in saved.parents  # no repository can commit it
    assert saved.parent == session.journal_path.parent / session.session_id
    assert saved.name == "tool-output-c1.txt"
    content = saved.read_text()
    assert SK not in content and "tok-value-123456" not in content and "\n30000\n" in content
    assert _mode(saved) == 0o600 and _mode(saved.parent) == 0o700 and _mode(user_data_dir()) == 0o700
    # the model saw the output as it was; the journal on disk did not keep the secrets
    assert SK in provider.requests[1].messages[-1]["content"]
    journal_text = session.journal_path.read_text()
    assert SK not in journal_text and "[redacted API key]" in journal_text
    assert _mode(session.journal_path) == 0o600 and _mode(session.journal_path.parent) == 0o700
    assert not (session.workspace / ".opencli" / "tmp").exists()


def test_read_tool_reads_saved_outputs_outside_the_workspace_but_write_cannot(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    outputs = tmp_path / "data" / "sessions" / "p" / "s1"
    outputs.mkdir(parents=True)
    saved = outputs / "tool-output-c1.txt"
    saved.write_text("full output\n")
    ctx = ToolContext(workspace=ws.resolve(), output_dir=outputs)
    assert "full output" in ReadTool().run(ReadArgs(path=str(saved)), ctx).text
    try:
        WriteTool().run(WriteArgs(path=str(saved), content="x"), ctx)
    except ToolError as exc:
        assert "outside the workspace" in str(exc)
    else:
        raise AssertionError("write into the saved-output folder was allowed")
    assert saved.read_text() == "full output\n"


def test_old_saved_paths_in_the_workspace_stay_readable(tmp_path):
    ws = tmp_path / "ws"
    old = ws / ".opencli" / "tmp" / "old-session" / "tool-output-c9.txt"
    old.parent.mkdir(parents=True)
    old.write_text("old saved output\n")
    ctx = ToolContext(workspace=ws.resolve(), output_dir=tmp_path / "elsewhere")
    assert "old saved output" in ReadTool().run(ReadArgs(path=".opencli/tmp/old-session/tool-output-c9.txt"), ctx).text


def test_bash_commands_do_not_get_secret_variables(tmp_path, monkeypatch):
    for name, value in {"OPENAI_API_KEY": "sk-x", "MY_SECRET": "s", "DB_PASSWORD": "p", "github_token": "g",
                        "SOME_API_KEY_FILE": "k", "GITHUB_TOKEN": "kept", "PLAIN_VALUE": "plain"}.items():
        monkeypatch.setenv(name, value)
    ctx = ToolContext(workspace=tmp_path.resolve(), output_dir=tmp_path / "out", env_allow=("GITHUB_TOKEN",))
    text = BashTool().run(BashArgs(command="env"), ctx).text
    names = {line.split("=", 1)[0] for line in text.splitlines() if "=" in line}
    assert {"GITHUB_TOKEN", "PLAIN_VALUE"} <= names
    assert not names & {"OPENAI_API_KEY", "MY_SECRET", "DB_PASSWORD", "github_token", "SOME_API_KEY_FILE"}


def test_bash_env_allow_comes_from_the_user_config_not_the_project(tmp_path, isolated_env):
    from agent.config.loading import load_settings

    (isolated_env / "config.toml").write_text('[bash]\nenv_allow = ["GITHUB_TOKEN"]\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".opencli.toml").write_text('[bash]\nenv_allow = ["OPENAI_API_KEY"]\n')
    settings = load_settings(ws)
    assert settings.bash.env_allow == ["GITHUB_TOKEN"]


def test_replay_log_is_private_and_redacted(tmp_path, capsys):
    from tui.cli import main

    ws = tmp_path / "ws"
    ws.mkdir()
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps([{"content": "ok"}]))
    log = tmp_path / "logs" / "log.jsonl"
    code = main(["run", f"use the key {SK} please", "--output-format", "json", "--replay", str(replay),
                 "--replay-log", str(log), "-C", str(ws), "--model", "openai/gpt-4.1"])
    capsys.readouterr()
    assert code == 0
    text = log.read_text()
    assert SK not in text and "[redacted API key]" in text
    assert _mode(log) == 0o600


def test_prompt_history_is_private_and_redacted(tmp_path):
    from tui.prompt_history_store import append_history, history_path

    append_history(tmp_path, f"deploy with {SK}")
    path = history_path(tmp_path)
    assert SK not in path.read_text() and _mode(path) == 0o600 and _mode(path.parent) == 0o700


def test_journal_redacts_key_patterns_not_only_secret_named_variables(tmp_path):
    from agent.session.journal import SessionJournal

    journal = SessionJournal(tmp_path / "j" / "s.jsonl")
    journal.append({"kind": "test", "text": f"echo {SK} && curl https://bob:pw-s3cret@example.com"})
    journal.close()
    (record,) = list(read_journal(tmp_path / "j" / "s.jsonl"))
    assert SK not in record["text"] and "pw-s3cret" not in record["text"]
    assert os.stat(tmp_path / "j" / "s.jsonl").st_mode & 0o077 == 0


def test_redaction_of_quoted_values_when_lowercasing_changes_the_length():
    redactor = Redactor(environ={})
    out = redactor.text('İstanbul: password = "abc123456"')  # "İ".lower() is two characters
    assert "abc123456" not in out and out.startswith("İstanbul")


def test_stream_redaction_drops_a_key_block_longer_than_what_is_held():
    from agent.secrets import stream as stream_module

    body = "\n".join("QUJDREVGR0hJSktMTU5PUFFSU1RVVldY" * 2 for _ in range(3000))  # about 200 kB
    data = f"before\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\nafter\n".encode()
    assert len(data) > 2 * stream_module.MAX_HELD_BYTES
    stream = StreamRedactor(Redactor(environ={}))
    out = b"".join(stream.feed(data[i:i + 4096]) for i in range(0, len(data), 4096)) + stream.flush()
    assert b"QUJDREVG" not in out
    assert out.startswith(b"before\n[redacted private key]") and out.endswith(b"\nafter\n")


def test_stream_redaction_of_a_key_block_cut_off_by_the_end_of_the_output():
    stream = StreamRedactor(Redactor(environ={}))
    out = stream.feed(b"x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7\n") + stream.flush()
    assert out == b"x\n[redacted private key]"

"""The real app on a pseudo-terminal, as a user runs it: what happens when it is killed or its
terminal goes away while a command runs (the command's process tree must not outlive it, the app
must not hang), and keys typed before its first frame."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRY = "import sys; from tui.cli import main; sys.exit(main())"
LONG_COMMAND = "sleep 300 & echo $! > child.pid; wait"


class Terminal:
    """A 120x36 pseudo-terminal running opencli-tui; ``wait_for`` reads until text appears."""

    def __init__(self, tmp_path: Path, replies: list[dict], *extra: str) -> None:
        self.ws = tmp_path / "ws"
        self.ws.mkdir()
        replay = tmp_path / "replay.json"
        replay.write_text(json.dumps(replies))
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color"}
        self.proc = subprocess.Popen([sys.executable, "-c", ENTRY, "-C", str(self.ws), "--replay", str(replay),
                                      "--permission-mode", "full-auto", *extra],
                                     stdin=slave, stdout=slave, stderr=slave, cwd=ROOT, env=env)
        os.close(slave)
        self.seen = b""

    def _read_until(self, done, what: str, timeout_s: float) -> None:
        """Read the terminal until ``done()`` is true (a terminal always reads: an unread pty
        would block the app's writes); fail after ``timeout_s`` seconds naming ``what``."""
        end = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > end:
                raise AssertionError(f"{what}; last output {self.seen[-2000:]!r}")
            if select.select([self.master], [], [], 0.1)[0]:
                try:
                    self.seen += os.read(self.master, 1 << 16)
                except OSError:  # the app closed the terminal: nothing more will come
                    time.sleep(0.05)
        self._drain()

    def _drain(self) -> None:
        """Read what is already written (an ended app's last output)."""
        while select.select([self.master], [], [], 0.05)[0]:
            try:
                chunk = os.read(self.master, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            self.seen += chunk

    def wait_for(self, text: bytes, timeout_s: float = 30.0) -> None:
        self._read_until(lambda: text in self.seen or self.proc.poll() is not None,
                         f"{text!r} never appeared", timeout_s)
        assert text in self.seen, f"the app ended before {text!r} appeared: {self.seen[-2000:]!r}"

    def wait_exit(self, timeout_s: float = 30.0) -> int:
        """Wait for the app to end while reading what it writes; return its exit code."""
        self._read_until(lambda: self.proc.poll() is not None, "the app did not exit", timeout_s)
        return self.proc.returncode

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        try:
            os.close(self.master)
        except OSError:
            pass


def _child_of_running_command(term: Terminal) -> int:
    pid_file = term.ws / "child.pid"
    end = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < end, "the bash command never started"
        time.sleep(0.05)
    return int(pid_file.read_text())


def _gone(pid: int, timeout_s: float = 15.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
            state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
            if state == "Z":
                return True
        except (ProcessLookupError, OSError):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def terminal(tmp_path: Path):
    made: list[Terminal] = []

    def start(replies: list[dict], *extra: str) -> Terminal:
        made.append(Terminal(tmp_path, replies, *extra))
        return made[-1]

    yield start
    for term in made:
        term.close()


def test_sigterm_ends_the_command_tree_and_restores_the_terminal(terminal) -> None:
    term = terminal([{"tool_calls": [{"name": "bash", "arguments": {"command": LONG_COMMAND}}]}, {"content": "x"}])
    term.wait_for(b"esc cancel")
    term.type(b"go\r")
    child = _child_of_running_command(term)
    term.proc.send_signal(signal.SIGTERM)
    term.wait_for(b"\x1b[?1049l")  # the alternate screen is left: the terminal is restored
    assert term.wait_exit() == 128 + signal.SIGTERM
    after = term.seen.split(b"\x1b[?1049l", 1)[1]
    assert b"Traceback" not in after and b"Error" not in after, after[-2000:]
    assert _gone(child), "the command outlived the app"


def test_a_closed_terminal_ends_the_app_and_the_command_tree(terminal) -> None:
    """SIGHUP (the terminal window closed): nothing may be left running, the app included."""
    term = terminal([{"tool_calls": [{"name": "bash", "arguments": {"command": LONG_COMMAND}}]}, {"content": "x"}])
    term.wait_for(b"esc cancel")
    term.type(b"go\r")
    child = _child_of_running_command(term)
    os.close(term.master)  # the terminal goes away ...
    term.proc.send_signal(signal.SIGHUP)  # ... and its processes get SIGHUP
    assert term.proc.wait(timeout=30) == 143  # interrupted, as after SIGTERM
    assert _gone(child), "the command outlived the app"


def test_a_task_typed_before_the_first_frame_is_sent_once(terminal, tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    term = terminal([{"content": "On it: fixing."}], "--replay-log", str(log))
    term.type(b"fix the tests\r")  # at once: the terminal is still in cooked mode
    term.wait_for(b"On it: fixing.")
    time.sleep(0.5)
    term.type(b"\x11")  # Ctrl+Q
    assert term.wait_exit() == 0
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(requests) == 1
    assert requests[0]["messages"][-1] == {"role": "user", "content": "fix the tests"}

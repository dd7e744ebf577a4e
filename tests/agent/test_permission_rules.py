"""Permission rules: bash line parsing, allow/deny matching, the loop applying them, and the
project file not being able to add allow rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.config.settings import PermissionMode
from agent.config.loading import load_settings
from agent.permissions.rules import PermissionRules, command_prefix
from agent.permissions.shell.parse import parse_command_line
from agent.permissions.shell.risk import risky_spans


def words(line: str) -> list[tuple[str, ...]]:
    parsed = parse_command_line(line)
    assert parsed.ok, parsed.unparsable
    return [c.words for c in parsed.commands]


class TestParsing:
    def test_compound_lines_split_into_simple_commands(self) -> None:
        assert words("a 1; b && c || d | e & f\ng") == [("a", "1"), ("b",), ("c",), ("d",), ("e",), ("f",), ("g",)]

    def test_quotes_keep_separators_inside_words(self) -> None:
        assert words("echo 'a; b' \"c && d\" e\\;f") == [("echo", "a; b", "c && d", "e;f")]

    def test_command_substitution_and_backticks_are_looked_into(self) -> None:
        assert words("echo $(rm -rf x) `whoami`") == [("echo", "$(…)", "$(…)"), ("rm", "-rf", "x"), ("whoami",)]
        assert words('echo "$(date +%s)"') == [("echo", "$(…)"), ("date", "+%s")]
        assert words("echo $(a $(b))") == [("echo", "$(…)"), ("a", "$(…)"), ("b",)]

    def test_subshells_and_comments(self) -> None:
        assert words("(cd x && make) | tee log # note; rm y") == [("cd", "x"), ("make",), ("tee", "log")]

    def test_redirects_belong_to_the_command(self) -> None:
        parsed = parse_command_line("make > out.txt 2>&1 < in &>/dev/null")
        (command,) = parsed.commands
        assert command.words == ("make",)
        assert [(r.op, r.target, r.writes) for r in command.redirects] == [
            (">", "out.txt", True), (">&", "1", False), ("<", "in", False), ("&>", "/dev/null", False)]
        assert command.writes_file

    @pytest.mark.parametrize("line", ["echo 'open", 'echo "open', "echo $(date", "cat <<EOF\nx\nEOF",
                                      "diff <(ls a) <(ls b)", "eval \"$cmd\"", "echo `x", "a )"])
    def test_unparsable_lines(self, line: str) -> None:
        assert not parse_command_line(line).ok

    def test_substitutions_inside_arithmetic_are_commands(self) -> None:
        """``$(( $(cmd) ))`` runs ``cmd``: it is found, in quotes too."""
        assert words('echo "$(( $(date +%s) - 5 ))"')[1] == ("date", "+%s")
        assert ("rm", "x") in words("echo $(( $(rm x) + 1 ))")

    def test_nested_substitutions_and_quoting(self) -> None:
        assert words("echo \"$(echo \"$(rm -rf /)\")\" 'it''s'") == [
            ("echo", "$(…)", "its"), ("echo", "$(…)"), ("rm", "-rf", "/")]
        assert words("echo $(echo `rm a`)") == [("echo", "$(…)"), ("echo", "$(…)"), ("rm", "a")]

    def test_case_items_and_comments(self) -> None:
        assert words("case $x in a) rm b;; esac") == [("rm", "b")]
        (command,) = parse_command_line("echo a # rm x; b").commands
        assert command.text == "echo a" and command.words == ("echo", "a")

    def test_redirect_after_a_list_belongs_to_its_last_command(self) -> None:
        parsed = parse_command_line("ls && make > log.txt")
        assert [(c.words, c.writes_file) for c in parsed.commands] == [(("ls",), False), (("make",), True)]
        assert parsed.commands[1].text == "make > log.txt"

    @pytest.mark.parametrize("line", ["echo $(cat <<EOF\nx\nEOF\n)", "echo \\$(rm x)", "cat <(ls)"])
    def test_here_documents_anywhere_and_syntax_errors_ask(self, line: str) -> None:
        assert not parse_command_line(line).ok

    def test_spans_count_characters_not_bytes(self) -> None:
        line = "echo héllo > fé.txt; rm é"
        commands = parse_command_line(line).commands
        assert [line[c.start:c.end] for c in commands] == ["echo héllo > fé.txt", "rm é"]

    def test_risky_spans(self) -> None:
        line = "ls && rm -rf build > log.txt; curl -s x | sh; git push; chmod +x a"
        parts = [line[s.start:s.end] for s in risky_spans(line)]
        assert parts == ["rm -rf build > log.txt", "sh", "git push", "chmod +x a"]
        other = "echo hi > out.txt"
        assert [other[s.start:s.end] for s in risky_spans(other)] == ["> out.txt"]
        assert risky_spans("pytest -q") == []
        assert risky_spans("echo 'x") and risky_spans("echo 'x")[0].reason.startswith("cannot be parsed")

    def test_command_prefix_suggestion(self) -> None:
        assert command_prefix("git status -s") == "git status"
        assert command_prefix("pytest -q tests/x.py") == "pytest"
        assert command_prefix("npm run build && ls") == "npm run"
        # a risky first command gets no suggestion: 'p' must never pre-fill a risky prefix
        assert command_prefix("rm -rf build && curl http://x | sh > out.txt") == ""
        assert command_prefix("git push origin main") == ""
        assert command_prefix("sudo apt install x") == ""


class TestMatching:
    rules = PermissionRules(allow=["pytest", "git status", "echo"], deny=["rm -rf", "git push"])

    def verdict(self, line: str) -> str:
        return self.rules.check("bash", {"command": line}).verdict

    def test_prefix_is_matched_by_whole_words(self) -> None:
        assert self.verdict("pytest") == "allow"
        assert self.verdict("pytest -q tests/x.py") == "allow"
        assert self.verdict("pytestx") == "none"
        assert self.verdict("git status -s") == "allow"
        assert self.verdict("git statusx") == "none"
        assert self.verdict("git") == "none"

    def test_every_command_must_match(self) -> None:
        assert self.verdict("pytest -q && echo done") == "allow"
        assert self.verdict("pytest; ls") == "none"
        assert self.verdict("echo $(pytest)") == "allow"
        assert self.verdict("echo $(cat /etc/passwd)") == "none"
        assert self.verdict("echo `curl x`") == "none"
        assert self.verdict("pytest | tee out") == "none"

    def test_write_redirects_are_not_allowed_by_a_rule(self) -> None:
        assert self.verdict("echo hi > notes.txt") == "none"
        assert self.verdict("pytest 2>&1 >/dev/null") == "allow"

    def test_unparsable_lines_ask(self) -> None:
        assert self.verdict("echo 'unbalanced") == "none"
        assert self.verdict("pytest <<EOF\nEOF") == "none"

    def test_deny_wins_anywhere_in_the_line(self) -> None:
        decision = self.rules.check("bash", {"command": "pytest && rm -rf /"})
        assert decision.verdict == "deny" and decision.rule == "rm -rf"
        assert "rm -rf" in decision.message
        assert self.verdict("echo $(rm -rf x)") == "deny"
        assert self.verdict("sudo rm -rf /") == "deny"
        assert self.verdict("echo 'x; git push origin") == "deny"  # unparsable, still denied
        assert self.verdict("rm -r x") == "none"

    @pytest.mark.parametrize("line", [
        "rm -fr /tmp/d1", "/bin/rm -rf /tmp/d2", "rm -r -f /tmp/d3", "rm -Rf x", "rm -rfv x", "rm -f -r x",
        "rm --recursive --force x", 'bash -c "rm -rf /tmp/x8"', "sh -c 'rm -fr x'", "zsh -lc 'git -C . push'",
        "dash -c 'echo $(rm -rf x)'", "bash -c \"bash -c 'rm -rf x'\"", 'eval "rm -rf x"', "eval rm -fr x",
        "git -C . push", "git -c x=y push", "git --no-pager push", "git --git-dir=.git push", "/usr/bin/git push",
        "sudo -u root /bin/rm -fr x", "timeout 5 rm -rf x", "nice -n 5 rm -rf x", "stdbuf -oL rm -rf x",
        "command rm -rf x", "exec rm -rf x", "nohup rm -rf x", "env A=1 /bin/rm -rf x", "xargs rm -fr",
        "find . -exec rm -rf {} +", "if rm -rf x; then :; fi", "ls | xargs sh -c 'rm -fr \"$1\"'"])
    def test_deny_bypasses_are_denied(self, line: str) -> None:
        assert self.verdict(line) == "deny", line

    @pytest.mark.parametrize("line", ["rm file", "rm -r x", "git pull", "grep -rf pattern", "git commit -m push",
                                      "./rm -r x"])
    def test_deny_non_matches(self, line: str) -> None:
        assert self.verdict(line) != "deny", line

    def test_allow_normalisation_and_shell_reentry(self) -> None:
        rules = PermissionRules(allow=["git status", "bash", "pytest", "find"])
        verdict = lambda line: rules.check("bash", {"command": line}).verdict  # noqa: E731
        assert verdict("git -C . status") == "allow"
        assert verdict("git --no-pager status -s") == "allow"
        assert verdict("git -c core.fsmonitor=x status") == "none"  # -c can run code: not skipped
        assert verdict("bash -c pytest") == "allow"
        assert verdict("bash -c 'pytest; curl x'") == "none"
        assert verdict("bash -c 'echo hi > f'") == "none"
        assert verdict("find . -name x") == "allow"
        assert verdict("find . -exec cat {} +") == "none"
        assert verdict("./pytest") == "none"  # allow rules do not match by basename

    def test_tool_rules_and_session_answers(self) -> None:
        rules = PermissionRules(allow=["edit"], deny=["tool:write"])
        assert rules.check("edit", {"path": "a"}).verdict == "allow"
        assert rules.check("write", {"path": "a"}).verdict == "deny"
        assert rules.check("bash", {"command": "edit x"}).verdict == "allow"  # a command prefix for bash
        assert rules.check("bash", {"command": "make"}).verdict == "none"
        rules.allow_prefix("make test")
        assert rules.check("bash", {"command": "make test -j2"}).verdict == "allow"
        assert rules.check("bash", {"command": "make install"}).verdict == "none"
        rules.allow_tool("bash")
        assert rules.check("bash", {"command": "anything | at all"}).verdict == "allow"
        denying = PermissionRules(deny=["rm"])
        denying.allow_tool("bash")
        assert denying.check("bash", {"command": "rm x"}).verdict == "deny"


class TestConfig:
    def test_user_rules_load(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        user = tmp_path / "user.toml"
        user.write_text('[permissions]\nallow = ["pytest"]\ndeny = ["rm -rf"]\n')
        monkeypatch.setenv("OPENCLI_CONFIG", str(user))
        settings = load_settings(tmp_path)
        assert settings.permissions.allow == ["pytest"]
        assert settings.permissions.deny == ["rm -rf"]

    def test_project_file_cannot_add_allow_rules_but_can_add_deny(self, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
        user = tmp_path / "user.toml"
        user.write_text('[permissions]\nallow = ["pytest"]\ndeny = ["rm -rf"]\n')
        monkeypatch.setenv("OPENCLI_CONFIG", str(user))
        workspace = tmp_path / "ws"
        workspace.mkdir()
        (workspace / ".opencli.toml").write_text('[permissions]\nallow = ["curl", "tool:bash"]\ndeny = ["git push"]\n')
        notices: list[str] = []
        settings = load_settings(workspace, notices=notices)
        assert settings.permissions.allow == ["pytest"]
        assert settings.permissions.deny == ["rm -rf", "git push"]
        assert any("allow rules" in n for n in notices)

    def test_project_file_alone(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("OPENCLI_CONFIG", str(tmp_path / "missing.toml"))
        (tmp_path / ".opencli.toml").write_text('[permissions]\nallow = ["bash"]\n')
        settings = load_settings(tmp_path)
        assert settings.permissions.allow == [] and settings.permission_mode == PermissionMode.ASK


class TestLoop:
    """The loop applies the rules headless (no prompt): allow rules run, deny rules refuse."""

    def run(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, **rules: list[str]):
        from agent.config.settings import Settings
        from agent.events import ToolCallFinished
        from agent.providers.scripted import ScriptedProvider
        from agent.runtime.build import build_session

        monkeypatch.setenv("OPENCLI_DATA_DIR", str(tmp_path / "data"))
        workspace = tmp_path / "ws"
        workspace.mkdir(exist_ok=True)
        provider = ScriptedProvider([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                                     {"content": "done"}])
        settings = Settings(model="openai/gpt-4.1", permission_mode="ask", permissions=rules)
        session = build_session(workspace, settings, provider=provider, interactive=False)
        events: list = []
        import threading

        session.run_turn("go", events.append, threading.Event())
        session.close()
        return [e for e in events if isinstance(e, ToolCallFinished)][0]

    def test_allow_rule_runs_headless(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        result = self.run(tmp_path, monkeypatch, "echo hello && echo again", allow=["echo"])
        assert not result.is_error and "hello" in result.output

    def test_unmatched_command_is_denied_headless(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        result = self.run(tmp_path, monkeypatch, "echo hello; touch x", allow=["echo"])
        assert result.is_error and "--permission-mode full-auto" in result.output

    def test_deny_rule_names_the_rule(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        result = self.run(tmp_path, monkeypatch, "echo hi && rm -rf x", allow=["echo", "rm"], deny=["rm -rf"])
        assert result.is_error and "'rm -rf'" in result.output

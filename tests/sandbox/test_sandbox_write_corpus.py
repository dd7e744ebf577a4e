"""The write corpus of the sandbox: every way of writing a file the issue lists, run through the
real bash tool in each sandbox mode, against targets in a fake machine (HOME, the workspace, a
watched folder beside it, another repository, /tmp outside the private temp folder, the journal's
folder). read-only: nothing changes anywhere; workspace-write: nothing changes outside the
workspace and the private temp folder, and the same writes inside the workspace work."""

from __future__ import annotations

import shutil
import sys
import time
import uuid
import zipfile
from pathlib import Path

import pytest

from agent.sandbox import SandboxMode

from .conftest import Machine, changes, needs_sandbox, prove_active, run_sandboxed, snapshot

pytestmark = needs_sandbox


def corpus(target: Path, machine: Machine, wheel: Path, npm_pkg: Path | None) -> list[str]:
    """The write attempts aimed at folder ``target`` (each one bash command line, run in the
    workspace)."""
    t = str(target)
    rel = "../" + target.name  # the same folder reached through ".." from the workspace
    items = [
        f"echo x > {t}/redirect.txt",
        f"echo x >> {t}/sentinel.txt",
        f"cat > {t}/heredoc.txt <<'EOF'\nx\nEOF",
        f"echo x | tee {t}/tee.txt",
        f"sed -i s/keep/gone/ {t}/sentinel.txt",
        f"perl -pi -e s/keep/gone/ {t}/sentinel.txt",
        f"cp README.md {t}/copied.txt",
        f"mv {t}/sentinel.txt {t}/moved.txt",
        f"rm -f {t}/sentinel.txt",
        f"touch {t}/touched {t}/sentinel.txt",
        f"ln -s /etc/passwd {t}/symlink",
        f"mkdir {t}/newdir",
        f"{sys.executable} -c \"open('{t}/py.txt', 'w').write('x')\"",
        f"find {t} -name sentinel.txt -delete",
        f"echo {t}/sentinel.txt | xargs rm -f",
        f"echo x > {rel}/dotdot.txt; echo x >> {rel}/sentinel.txt",
        f"setsid sh -c 'sleep 0.4; echo late > {t}/late.txt; rm -f {t}/sentinel.txt' >/dev/null 2>&1 &",
        f"cd {t} && git commit -q -am wip --allow-empty",
        f"cd {t} && git checkout -- dirty.txt",
        f"cd {t} && git checkout -q -b other",
        f"cd {t} && git stash -q",
    ]
    python = shutil.which("python3", path=str(Path(sys.base_prefix) / "bin")) or sys.executable
    items.append(f"HOME={machine.home} {python} -m pip install -q --no-index --user --no-warn-script-location {wheel}")
    items.append(f"{python} -m pip install -q --no-index --target {t}/site {wheel}")
    if npm_pkg is not None:
        items.append(f"cd {t} && npm install --offline --no-audit --no-fund {npm_pkg}")
    return items


OUTSIDE_ONLY = [  # aimed at fixed places, not at a target folder
    "echo x > link_out/via_link.txt; echo x >> link_out/sentinel.txt",  # a symlink in the repo pointing outside
    "echo x > ~/home.txt; echo x >> ~/.bashrc; echo k >> ~/.ssh/authorized_keys",
    "echo x > $TMPDIR/../{escape}",  # /tmp beside the private temp folder
    "echo x > /tmp/{escape}",
]


@pytest.fixture
def wheel(machine: Machine) -> Path:
    """A tiny wheel built here (one module, no dependencies): ``pip install --no-index`` of it."""
    path = machine.root / "wheels" / "sbxdemo-0.1-py3-none-any.whl"
    path.parent.mkdir()
    with zipfile.ZipFile(path, "w") as whl:
        whl.writestr("sbxdemo.py", "VALUE = 1\n")
        whl.writestr("sbxdemo-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: sbxdemo\nVersion: 0.1\n")
        whl.writestr("sbxdemo-0.1.dist-info/WHEEL",
                     "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        whl.writestr("sbxdemo-0.1.dist-info/RECORD", "")
    return path


@pytest.fixture
def npm_pkg(machine: Machine) -> Path | None:
    """A local npm package folder (``npm install`` of it needs no registry), or None without npm."""
    if shutil.which("npm") is None:
        return None
    path = machine.root / "npmpkg"
    path.mkdir()
    (path / "package.json").write_text('{"name": "sbx-demo", "version": "1.0.0", "main": "index.js"}\n')
    (path / "index.js").write_text("module.exports = 1;\n")
    return path


def _run_corpus(machine: Machine, mode: SandboxMode, targets: list[Path], wheel: Path,
                npm_pkg: Path | None) -> tuple[int, list[str], dict[str, str]]:
    """Prove the sandbox active, run every attempt aimed at ``targets`` and the fixed ones; return
    (attempts, changed paths outside the allowed places, outputs by command)."""
    policy = machine.policy(mode)
    escape = f"opencli-escape-{uuid.uuid4().hex}"
    extra = [Path("/tmp") / escape, machine.private.parent / escape]
    prove_active(machine, policy)
    watched = machine.watched() if mode is SandboxMode.READ_ONLY else [p for p in machine.watched() if p != machine.ws]
    before = snapshot(watched, extra)
    commands = [c for target in targets for c in corpus(target, machine, wheel, npm_pkg)]
    commands += [c.format(escape=escape) for c in OUTSIDE_ONLY]
    outputs = {}
    for command in commands:
        outputs[command] = run_sandboxed(machine, policy, command).text
    time.sleep(1.0)  # the forked children write after their parent exited
    after = snapshot(watched, extra)
    for path in extra:
        if path.exists():
            path.unlink()
    return len(commands), changes(before, after), outputs


def test_read_only_corpus_changes_nothing_anywhere(machine, wheel, npm_pkg):
    targets = [machine.ws, machine.outside, machine.home, machine.other, machine.data]
    attempts, leaks, outputs = _run_corpus(machine, SandboxMode.READ_ONLY, targets, wheel, npm_pkg)
    print(f"read-only: {attempts} attempts, {len(leaks)} leaks")
    assert attempts >= 100
    assert leaks == [], leaks
    refused = [c for c, text in outputs.items() if "[sandbox: the read-only sandbox refused" in text]
    assert refused, "no refusal note reached the model"
    assert "In Plan mode, propose the step in the plan" in outputs[f"echo x > {machine.ws}/redirect.txt"] or refused


def test_workspace_write_corpus_changes_nothing_outside(machine, wheel, npm_pkg):
    targets = [machine.outside, machine.home, machine.other, machine.data]
    attempts, leaks, outputs = _run_corpus(machine, SandboxMode.WORKSPACE_WRITE, targets, wheel, npm_pkg)
    print(f"workspace-write: {attempts} attempts, {len(leaks)} leaks")
    assert attempts >= 80
    assert leaks == [], leaks


def test_workspace_write_allows_the_same_writes_inside_the_workspace(machine, wheel, npm_pkg):
    policy = machine.policy(SandboxMode.WORKSPACE_WRITE)
    prove_active(machine, policy)
    for command in corpus(machine.ws, machine, wheel, npm_pkg)[:17]:
        run_sandboxed(machine, policy, command)
    time.sleep(0.8)
    for name in ("redirect.txt", "heredoc.txt", "tee.txt", "copied.txt", "touched", "newdir", "py.txt", "late.txt"):
        assert (machine.ws / name).exists() or (machine.ws / name).is_symlink(), name
    out = run_sandboxed(machine, policy, "git add -A && git commit -q -m inside && git log --oneline | head -1")
    assert "inside" in out.text and "[exit code: 0]" in out.text
    out = run_sandboxed(machine, policy, f"echo x > $TMPDIR/t && cat $TMPDIR/t && test $TMPDIR = {machine.private}")
    assert "[exit code: 0]" in out.text
    items = corpus(machine.ws, machine, wheel, npm_pkg)
    out = run_sandboxed(machine, policy, items[-2] if npm_pkg is not None else items[-1])  # pip --target in the workspace
    assert "[exit code: 0]" in out.text and (machine.ws / "site" / "sbxdemo.py").exists(), out.text
    if npm_pkg is not None:  # npm's cache points into HOME, which is not writable: keep it in the workspace
        out = run_sandboxed(machine, policy, f"export npm_config_cache={machine.ws}/.npm-cache; " + items[-1])
        assert "[exit code: 0]" in out.text and (machine.ws / "node_modules" / "sbx-demo").exists(), out.text

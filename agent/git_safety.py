"""Running git for the app itself without the repository's configured programs (``safe_argv``,
``safe_env``): every git call the agent makes on its own (the git snapshot, ``git_repo``, the
pipeline's change detection) goes through here.

Why: a command the model runs can write ``.git/config`` (the workspace is writable), or a
linked worktree's common dir, or ``.git/commondir``. A key there that names a program would
then run that program *unsandboxed* the next time the app runs git itself. git's documentation
(git-config(1), gitattributes(5), githooks(5)) lists the keys that start programs; the app's
calls neutralise every one a local, read-only call could reach:

- fixed overrides (``SAFE_CONFIG``, given as ``-c``, which beats every config file):
  ``core.fsmonitor`` (run by ``status``/``diff``), ``core.hooksPath=/dev/null`` (no hooks),
  ``core.pager``/``pager.*`` (``--no-pager`` too), ``core.editor``/``sequence.editor``,
  ``diff.external`` (plus ``--no-ext-diff`` / ``--no-textconv`` where diffs are made),
  ``log.showSignature`` and ``gpg.program``/``gpg.*.program`` (verifying signatures runs gpg),
  ``core.sshCommand``, ``core.gitProxy``, ``core.askPass``, ``credential.helper`` (emptied),
  ``core.alternateRefsCommand``, ``gc.auto``/``maintenance.auto`` (no background gc),
  ``protocol.ext.allow=never``, ``submodule.recurse=false``;
- per-repository overrides (``driver_overrides``): git reads attribute-selected drivers by
  name, so the configured ``filter.<name>.clean|smudge|process``, ``diff.<name>.textconv|command``
  and ``merge.<name>.driver`` keys are listed with ``git config --get-regexp`` (which runs
  nothing, and follows includes) and each is set to the empty string, which git treats as "no
  program" (and ``filter.<name>.required=false``, so the call does not fail);
- the environment (``safe_env``): no repository-relocating ``GIT_*`` variables, no inherited
  ``GIT_CONFIG_PARAMETERS`` / ``GIT_CONFIG_COUNT``, ``GIT_EXTERNAL_DIFF``, ``GIT_SSH(_COMMAND)``,
  ``GIT_ASKPASS``/``SSH_ASKPASS``, ``GIT_EDITOR``, ``GIT_PAGER=cat``;
- ``status`` callers pass ``--ignore-submodules=dirty`` (``STATUS_FLAGS``): a submodule's own
  git (with its own config) is not started.

The system and global config files are read as usual (the sandbox cannot write them).
gitpython (``git_repo.repository_dirs``) only parses ``.git`` in Python and runs no git.
"""

from __future__ import annotations

import os
from pathlib import Path

from .process import run_bounded

#: Overrides passed as ``-c KEY=VALUE`` to every git call the app makes.
SAFE_CONFIG: tuple[str, ...] = (
    "core.fsmonitor=false", "core.hooksPath=/dev/null", "core.pager=cat", "core.editor=true",
    "sequence.editor=true", "diff.external=", "log.showSignature=false", "gpg.program=false",
    "gpg.openpgp.program=false", "gpg.x509.program=false", "gpg.ssh.program=false",
    "gpg.ssh.defaultKeyCommand=", "core.sshCommand=false", "core.gitProxy=", "core.askPass=",
    "credential.helper=", "core.alternateRefsCommand=", "gc.auto=0", "maintenance.auto=false",
    "protocol.ext.allow=never", "submodule.recurse=false", "status.submoduleSummary=false",
    "diff.submodule=short", "core.untrackedCache=false", "color.ui=false", "pager.status=false",
    "pager.diff=false", "pager.log=false", "pager.show=false", "pager.branch=false",
)
#: Flags for ``git status`` calls: never start a submodule's git.
STATUS_FLAGS: tuple[str, ...] = ("--ignore-submodules=dirty",)
#: Flags for commands that make diffs (``diff``, ``log -p``, ``show``).
DIFF_FLAGS: tuple[str, ...] = ("--no-ext-diff", "--no-textconv")

#: Config keys naming a driver program, selected by attributes (``git config --get-regexp``).
_DRIVER_KEYS = r"^(filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|merge\..+\.driver)$"
#: Environment variables removed from every app git call.
_UNSAFE_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
               "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX",
               "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND",
               "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PROXY_COMMAND",
               "GIT_CONFIG", "GIT_EXEC_PATH", "GIT_TRACE2_EVENT", "GIT_ATTR_SOURCE")
#: Seconds the driver listing may take at most.
_LIST_TIMEOUT_S = 2.0


def safe_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default ``os.environ``) without the variables that relocate the repository or
    name programs (see the module docstring), with a C locale, no pager, no prompt, no optional
    locks (a status never takes the index lock)."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if k not in _UNSAFE_ENV and not k.startswith("GIT_CONFIG_KEY_")
           and not k.startswith("GIT_CONFIG_VALUE_")}
    env.update({"LC_ALL": "C", "LANGUAGE": "C", "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0",
                "GIT_PAGER": "cat", "PAGER": "cat", "GIT_ADVICE": "0"})
    return env


def _config_args(overrides: tuple[str, ...] | list[str]) -> list[str]:
    args: list[str] = []
    for item in overrides:
        args += ["-c", item]
    return args


def driver_overrides(cwd: Path | str, *, deadline: float | None = None) -> list[str]:
    """``KEY=`` overrides (empty values: no program) for every driver program the config of the
    repository at ``cwd`` names (``filter.*.clean`` ...); empty outside a repository, without
    git, or when git does not answer before ``deadline`` (monotonic seconds; default 2 s). Never
    raises."""
    import time

    end = deadline if deadline is not None else time.monotonic() + _LIST_TIMEOUT_S
    argv = ["git", "--no-pager", *_config_args(SAFE_CONFIG), "config", "-z", "--get-regexp", _DRIVER_KEYS]
    try:
        result = run_bounded(argv, Path(cwd), deadline=end, max_bytes=1 << 20, env=safe_env())
    except OSError:
        return []
    if result.returncode != 0:
        return []
    keys = []
    for record in bytes(result.stdout).split(b"\0"):
        key = os.fsdecode(record.split(b"\n", 1)[0]).strip()
        if key and "=" not in key and key not in keys:
            keys.append(key)
    overrides = [f"{key}=" for key in keys]
    for key in keys:  # a required filter without a program would fail the call
        if key.startswith("filter.") and (required := key.rsplit(".", 1)[0] + ".required=false") not in overrides:
            overrides.append(required)
    return overrides


def safe_argv(cwd: Path | str, args: list[str] | tuple[str, ...], *, deadline: float | None = None) -> list[str]:
    """The argv of ``git ARGS`` run by the app in ``cwd``: ``git --no-pager`` with every
    ``SAFE_CONFIG`` and ``driver_overrides`` override before ``ARGS``. Never raises."""
    return ["git", "--no-pager", *_config_args(SAFE_CONFIG),
            *_config_args(driver_overrides(cwd, deadline=deadline)), *args]

"""Loading settings: defaults < user config file < project ``.opencli.toml`` < ``OPENCLI_*`` env < CLI flags.

Places (DESIGN.md 5b): the user file is ``<platformdirs user config dir>/opencli/config.toml`` or
the file named by ``OPENCLI_CONFIG``; the project file is ``.opencli.toml`` at the workspace root.
Nested sections use ``__`` in env names (``OPENCLI_COMPACTION__STRIP_REASONING_AFTER_TURNS``);
the flat names ``OPENCLI_MAX_TOOL_OUTPUT`` and ``OPENCLI_CONTEXT_WINDOW`` are aliases of their nested keys.

A project file may not loosen permissions nor change ``api_base`` (a cloned repository must not
be able to): those keys are dropped from it, with a notice, unless they make things stricter. It
may not set ``[hooks]`` either (shell commands run on events: opening a repository must not run them).

``load_settings`` raises ``ConfigError`` with one line naming the setting when a value is invalid,
and where the bad value came from: the flag (``--max-turns``), the ``OPENCLI_*`` variable, or the
file (user config or ``.opencli.toml``) and key.
Unknown keys (in either file, or ``OPENCLI_*`` env names) are not errors, for forward
compatibility: each gives a notice naming the key, its source and the likely intended key. So does
an ``OPENCLI_CONFIG`` that names no file (the defaults apply).
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_settings import SettingsError

from .files import PROJECT_FILE, read_toml, user_config_path
from .settings import ConfigError, PermissionMode, Settings, is_looser


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return read_toml(path)
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from exc


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


#: ``OPENCLI_*`` env names that are not settings.
_NON_SETTING_ENV = {"OPENCLI_CONFIG", "OPENCLI_DATA_DIR"}


def _section_model(name: str) -> type[BaseModel] | None:
    """Return the model of a section field (``compaction`` -> CompactionSettings), else None."""
    field = Settings.model_fields.get(name)
    annotation = field.annotation if field is not None else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _did_you_mean(key: str, known: list[str], fmt: str = "{}") -> str:
    close = difflib.get_close_matches(key, known, n=1)
    return f" (did you mean {fmt.format(close[0])}?)" if close else ""


def _unknown_file_keys(data: dict[str, Any], source: Path, notices: list[str]) -> None:
    """Append a notice for each key of a TOML file's ``data`` that is not a setting."""
    top_known = list(Settings.model_fields)
    for raw_key, value in data.items():
        key = raw_key.replace("-", "_")
        if key not in Settings.model_fields:
            notices.append(f"{source}: unknown setting {raw_key!r}; ignored"
                           f"{_did_you_mean(key, top_known, '{!r}')}.")
            continue
        section = _section_model(key)
        if section is None or not isinstance(value, dict):
            continue
        sub_known = list(section.model_fields)
        for sub_key in value:
            if sub_key not in section.model_fields:
                suggestion = _did_you_mean(sub_key.replace("-", "_"), sub_known, f"{key}.{{}}")
                notices.append(f"{source}: unknown setting {key}.{sub_key}; ignored{suggestion}.")


def _unknown_env_names(notices: list[str]) -> None:
    """Append a notice for each ``OPENCLI_*`` env name that is not a setting."""
    top_known = [name.upper() for name in Settings.model_fields]
    for name in sorted(os.environ):
        upper = name.upper()
        if not upper.startswith("OPENCLI_") or upper in _NON_SETTING_ENV:
            continue
        parts = upper[len("OPENCLI_"):].split("__")
        field = parts[0].lower()
        if field not in Settings.model_fields:
            notices.append(f"unknown setting in env {name}; ignored"
                           f"{_did_you_mean(parts[0], top_known, 'OPENCLI_{}')}.")
            continue
        section = _section_model(field)
        if len(parts) == 1:
            continue
        if section is None or len(parts) > 2 or parts[1].lower() not in section.model_fields:
            sub_known = [sub.upper() for sub in section.model_fields] if section is not None else []
            suggestion = _did_you_mean(parts[1], sub_known, f"OPENCLI_{parts[0]}__{{}}") if len(parts) == 2 else ""
            notices.append(f"unknown setting in env {name}; ignored{suggestion}.")


def _restrict_project(project: dict[str, Any], user: dict[str, Any], notices: list[str]) -> dict[str, Any]:
    project = {k.replace("-", "_"): v for k, v in project.items()}
    if "api_base" in project:
        project.pop("api_base")
        notices.append(".opencli.toml may not set api_base; ignored (set it in your user config, env or --api-base).")
    _restrict_project_rules(project, user, notices)
    if "hooks" in project:  # opening a repository must not run its code
        project.pop("hooks")
        notices.append(".opencli.toml may not set [hooks]: opening a repository must not run its commands; "
                       "ignored (put hooks in your user config).")
    project.pop("mcp", None)  # project servers need the user's approval first: agent.mcp.project reads them
    bash = project.get("bash")
    if isinstance(bash, dict) and bash.pop("env_allow", None) is not None:
        notices.append(".opencli.toml may not pass secret environment variables to commands ([bash] env_allow); "
                       "ignored (put it in your user config).")
    _restrict_project_sandbox(project, notices)
    _restrict_project_budget(project, user, notices)
    if "permission_mode" in project:
        try:
            wanted = PermissionMode(project["permission_mode"])
            current = PermissionMode(user.get("permission_mode", PermissionMode.ASK.value))
        except ValueError:
            return project  # validation reports the bad value with its name
        if is_looser(wanted, current):
            project.pop("permission_mode")
            notices.append(f".opencli.toml may not loosen permission_mode to {wanted.value}; ignored.")
    return project


def _restrict_project_sandbox(project: dict[str, Any], notices: list[str]) -> None:
    """A project ``[sandbox]`` section may only tighten: ``mode = "off"``, ``network = true``,
    ``writable`` and ``unix_sockets`` are dropped with a notice."""
    section = project.get("sandbox")
    if not isinstance(section, dict):
        return
    section = dict(section)
    loosened = [key for key in ("writable", "unix_sockets") if section.pop(key, None)]
    if section.get("mode") in ("off", "auto"):
        loosened.append(f"mode = {section.pop('mode')!r}")
    if section.get("network") is True:
        loosened.append("network = true")
        section.pop("network")
    if loosened:
        notices.append(f".opencli.toml may not loosen the sandbox ({', '.join(loosened)}); ignored.")
    project["sandbox"] = section


def _restrict_project_budget(project: dict[str, Any], user: dict[str, Any], notices: list[str]) -> None:
    """A project ``[budget]`` section may only lower the user's limits (a cloned repository must
    not raise a spending cap): a limit above the user file's is dropped with a notice; a limit
    where the user set none is kept (it tightens "no limit")."""
    section, mine = project.get("budget"), user.get("budget")
    if not isinstance(section, dict) or not isinstance(mine, dict):
        return
    section = dict(section)
    for key in ("max_cost_usd", "max_tokens"):
        wanted, limit = section.get(key), mine.get(key)
        if limit is None or wanted is None:
            continue
        try:
            raised = wanted is False or float(wanted) > float(limit)
        except (TypeError, ValueError):
            continue  # validation reports the bad value with its name
        if raised:
            section.pop(key)
            notices.append(f".opencli.toml may not raise the budget ({key} = {wanted} over your {limit}); ignored.")
    project["budget"] = section


def _restrict_project_rules(project: dict[str, Any], user: dict[str, Any], notices: list[str]) -> None:
    """A project ``[permissions]`` section may only tighten: its ``allow`` rules are dropped (with a
    notice); its ``deny`` rules are added to the user's (not replacing them) by ``_join_deny_rules``
    after the merge."""
    section = project.get("permissions")
    if section is None:
        return
    if not isinstance(section, dict):
        project.pop("permissions")
        notices.append(".opencli.toml: [permissions] must be a table; ignored.")
        return
    section = dict(section)
    if section.pop("allow", None):
        notices.append(".opencli.toml may not add permission allow rules; ignored (put them in your user config).")
    # The user's allow rules survive: ``_merge`` merges the two sections key by key.
    project["permissions"] = section


def _join_deny_rules(files: dict[str, Any], user: dict[str, Any], project: dict[str, Any]) -> dict[str, Any]:
    """Return the merged ``files`` with the deny rules of both files, the user's first (a merge
    would let the project's list replace the user's). Duplicates are dropped; the project dict
    keeps its own list, so an invalid rule can be traced to the file it is in."""
    user_section, project_section = user.get("permissions"), project.get("permissions")
    if not (isinstance(user_section, dict) and isinstance(project_section, dict)):
        return files
    user_deny, project_deny = user_section.get("deny") or [], project_section.get("deny") or []
    if not (isinstance(user_deny, list) and isinstance(project_deny, list)):
        return files
    joined: list[Any] = []
    for rule in [*user_deny, *project_deny]:
        if rule not in joined:  # by equality: a bad (unhashable) rule is reported, not a crash
            joined.append(rule)
    return {**files, "permissions": {**files["permissions"], "deny": joined}}


def load_settings(
    workspace: Path,
    flags: dict[str, Any] | None = None,
    notices: list[str] | None = None,
) -> Settings:
    """Build the settings for ``workspace`` from every source.

    ``workspace``: the project folder (its ``.opencli.toml`` is read). ``flags`` holds CLI values
    keyed by setting name (``None`` values are ignored; a section is a dict, e.g.
    ``{"compaction": {"mode": "off"}}``); the flag of setting ``max_turns`` is taken to be
    ``--max-turns`` and that of a section ``compaction`` ``--compaction``. Notices (unknown keys,
    ignored project keys, an ``OPENCLI_CONFIG`` naming no file) are appended to ``notices``, one
    line each. Returns the validated ``Settings``.

    Raises ``ConfigError`` on invalid input: one line naming the setting, the bad value and where
    it came from (the flag, the ``OPENCLI_*`` variable, or the config file and key).
    """
    notices = notices if notices is not None else []
    user_path, project_path = user_config_path(), Path(workspace) / PROJECT_FILE
    _named_config_missing(user_path, notices)
    user_raw, project_raw = _read_toml(user_path), _read_toml(project_path)
    _unknown_file_keys(user_raw, user_path, notices)
    _unknown_file_keys(project_raw, project_path, notices)
    _unknown_env_names(notices)
    user = {k.replace("-", "_"): v for k, v in user_raw.items()}
    project = _restrict_project(project_raw, user, notices)
    files = _join_deny_rules(_merge(user, project), user, project)
    env_keys = {k[len("OPENCLI_"):].lower().split("__")[0] for k in os.environ if k.startswith("OPENCLI_")}
    # Env beats files: drop file values that env sets, then let pydantic-settings read env.
    file_values = {k: v for k, v in files.items() if k not in env_keys or isinstance(v, dict)}
    flag_values = {k: v for k, v in (flags or {}).items() if v is not None}
    sources = _Sources(flag_values, project, project_path, user, user_path)
    try:
        from_env = Settings()
    except SettingsError as exc:
        raise _env_parse_error(exc) from None
    except ValidationError as exc:
        raise _invalid_setting(exc, sources.env_only) from None
    try:
        settings = _build(from_env, file_values, flag_values)
    except ValidationError as exc:
        raise _invalid_setting(exc, sources.below_env) from None
    _check_reminder_rules(settings, sources)
    return settings


def _named_config_missing(user_path: Path, notices: list[str]) -> None:
    """Append a notice when ``OPENCLI_CONFIG`` names no readable file (it is then not read at all:
    neither it nor the default user config file). Not an error: the defaults apply."""
    if not os.environ.get("OPENCLI_CONFIG"):
        return
    if not user_path.exists():
        notices.append(f"OPENCLI_CONFIG names {user_path}, which does not exist; no user config file was read.")
    elif not user_path.is_file():
        notices.append(f"OPENCLI_CONFIG names {user_path}, which is not a file; no user config file was read.")


def _defines(data: Any, loc: tuple[Any, ...], value: Any) -> bool:
    """Whether the nested ``data`` (a source's dict of settings) holds the value at ``loc``.

    Dict keys must all be present. At a list the walk stops: a list index that ends ``loc``
    (``permissions.deny.1``) counts only when ``value`` is one of the list's items, because a
    merged list (the deny rules) holds items from several sources."""
    node = data
    for i, part in enumerate(loc):
        if isinstance(node, dict):
            if part not in node:
                return False
            node = node[part]
        elif isinstance(node, list):
            if isinstance(part, int) and i == len(loc) - 1:
                return value in node
            return True
        else:
            return True
    return True


def _env_name(loc: tuple[Any, ...]) -> str | None:
    """Return the ``OPENCLI_*`` variable (as spelled in the environment) that sets ``loc``: the
    longest of ``OPENCLI_A__B``, ``OPENCLI_A`` present (a section may come as JSON), else None."""
    names = [str(p) for p in loc if isinstance(p, str)]
    present = {name.upper(): name for name in os.environ}
    for end in range(len(names), 0, -1):
        wanted = "OPENCLI_" + "__".join(names[:end]).upper()
        if wanted in present:
            return present[wanted]
    return None


class _Sources:
    """Where each setting came from, to name it in an error: flags > env > project file > user file.

    ``flags``: CLI values by setting name; ``project`` / ``user``: the (normalised, for the project
    file restricted) TOML tables and their paths."""

    def __init__(self, flags: dict[str, Any], project: dict[str, Any], project_path: Path,
                 user: dict[str, Any], user_path: Path) -> None:
        self.flags, self.project, self.project_path = flags, project, project_path
        self.user, self.user_path = user, user_path

    @staticmethod
    def env_only(loc: tuple[Any, ...], value: Any) -> str:
        """Describe the env source of ``loc`` (the environment alone was being validated)."""
        name = _env_name(loc) or "OPENCLI_" + "__".join(str(p).upper() for p in loc if isinstance(p, str))
        return f"env {name}"

    def below_env(self, loc: tuple[Any, ...], value: Any) -> str:
        """Describe the source of ``loc`` among flags and files (env values were valid already)."""
        if _defines(self.flags, loc, value):
            return f"flag {flag_name(loc)}"
        return self._file(loc, value) or f"config key {_key(loc)}"

    def any(self, loc: tuple[Any, ...], value: Any) -> str:
        """Describe the source of ``loc`` in precedence order: flag, env, project file, user file."""
        if _defines(self.flags, loc, value):
            return f"flag {flag_name(loc)}"
        name = _env_name(loc)
        if name is not None:
            return f"env {name}"
        return self._file(loc, value) or f"config key {_key(loc)}"

    def _file(self, loc: tuple[Any, ...], value: Any) -> str | None:
        for data, path in ((self.project, self.project_path), (self.user, self.user_path)):
            if _defines(data, loc, value):
                return f"{path}, key {_key(loc)}"
        return None


#: Flags that set a key inside a section (``tui/cli.py`` ``_flags``): the flag a user typed.
NESTED_FLAGS = {("budget", "max_cost_usd"): "--max-cost", ("budget", "max_tokens"): "--max-tokens",
                ("compaction", "mode"): "--compaction", ("sandbox", "mode"): "--sandbox",
                ("verify", "enabled"): "--verify"}


def flag_name(loc: tuple[Any, ...]) -> str:
    """The command-line flag that sets the setting at validation location ``loc`` (e.g.
    ``("budget", "max_cost_usd")`` -> ``"--max-cost"``; a top-level key ``max_turns`` ->
    ``"--max-turns"``)."""
    keys = tuple(str(p) for p in loc if isinstance(p, str))
    return NESTED_FLAGS.get(keys[:2], f"--{keys[0].replace('_', '-')}" if keys else "--?")


def _key(loc: tuple[Any, ...]) -> str:
    """The dotted config key of a validation location (list indexes dropped)."""
    return ".".join(str(p) for p in loc if isinstance(p, str))


def _invalid_setting(exc: ValidationError, describe: Any) -> ConfigError:
    """Turn the first error of ``exc`` into a one-line ``ConfigError`` naming the setting, the
    value and its source (``describe(loc, value)`` -> e.g. ``"flag --max-turns"``)."""
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    value = err.get("input")
    name = ".".join(str(p) for p in loc)
    message = " ".join(str(err["msg"]).split())
    return ConfigError(f"invalid setting {name}={value!r}: {message} (from {describe(loc, value)})")


def _env_parse_error(exc: SettingsError) -> ConfigError:
    """A section given in env as something that is not JSON (``OPENCLI_COMPACTION=x``)."""
    match = re.search(r'field "([^"]+)"', str(exc))
    field = match.group(1) if match else "?"
    name = _env_name((field,)) or f"OPENCLI_{field.upper()}"
    return ConfigError(f"invalid setting {field}: not valid JSON for a section; set one key with "
                       f"{name}__KEY (from env {name})")


def _check_reminder_rules(settings: Settings, sources: _Sources) -> None:
    """Raise ``ConfigError`` when ``[reminders] rules`` is not a valid rule list."""
    from .reminder_rules import rules_from_config

    try:
        rules_from_config(settings.reminders.rules)
    except ValueError as exc:
        source = sources.any(("reminders", "rules"), settings.reminders.rules)
        raise ConfigError(f"invalid setting reminders.rules: {exc} (from {source})") from None


def _build(from_env: Settings, file_values: dict[str, Any], flag_values: dict[str, Any]) -> Settings:
    # Precedence within pydantic-settings: init kwargs > env. Files must sit below env, so build
    # from env first (``from_env``, by the caller) and then overlay files (for keys env did not
    # set) and flags.
    data = from_env.model_dump()
    env_set = from_env.model_fields_set
    for key, value in file_values.items():
        if key not in Settings.model_fields:
            continue
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            env_section = getattr(from_env, key)
            section_env_set = env_section.model_fields_set if isinstance(env_section, BaseModel) else set()
            merged = dict(data[key])
            for sub_key, sub_value in value.items():
                if sub_key not in section_env_set:
                    merged[sub_key] = sub_value
            data[key] = merged
        elif key not in env_set:
            data[key] = value
    for key, value in flag_values.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}  # a flag sets one key of a section
        else:
            data[key] = value
    return Settings.model_validate(data)

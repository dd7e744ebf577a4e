"""Settings: defaults < user config file < project ``.opencli.toml`` < ``OPENCLI_*`` env < CLI flags.

Places (DESIGN.md 5b): the user file is ``<platformdirs user config dir>/opencli/config.toml`` or
the file named by ``OPENCLI_CONFIG``; the project file is ``.opencli.toml`` at the workspace root.
Nested sections use ``__`` in env names (``OPENCLI_COMPACTION__STRIP_REASONING_AFTER_TURNS``);
the seed's flat names ``OPENCLI_MAX_TOOL_OUTPUT`` and ``OPENCLI_CONTEXT_WINDOW`` keep working.

A project file may not loosen permissions nor change ``api_base`` (a cloned repository must not
be able to): those keys are dropped from it, with a notice, unless they make things stricter.

``load_settings`` raises ``ConfigError`` with one line naming the setting when a value is invalid.
Unknown keys (in either file, or ``OPENCLI_*`` env names) are not errors, for forward
compatibility: each gives a notice naming the key, its source and the likely intended key.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from .config_files import APP_NAME, PROJECT_FILE, read_toml, user_config_path, user_data_dir  # noqa: F401 (re-exported)

EMBEDDED_MODEL = "embedded/smollm2-135m"


class ConfigError(Exception):
    """An invalid setting; the message is one line that names the setting and the source."""


class PermissionMode(str, Enum):
    """How tool calls are gated (DESIGN.md 6).

    ask: mutating and exec tools ask; auto-edit: edits allowed, exec asks; full-auto: everything
    runs; read-only: only read tools run.
    """

    ASK = "ask"
    AUTO_EDIT = "auto-edit"
    FULL_AUTO = "full-auto"
    READ_ONLY = "read-only"


#: Strictness order used when a project file tries to set the permission mode.
_STRICTNESS = {PermissionMode.READ_ONLY: 0, PermissionMode.ASK: 1, PermissionMode.AUTO_EDIT: 2,
               PermissionMode.FULL_AUTO: 3}


class CompactionSettings(BaseModel):
    """The ``[compaction]`` section."""

    mode: Literal["off", "auto", "manual"] = Field("auto", description="off, auto or manual (/compact only).")
    threshold: float = Field(0.8, description="Fraction of the context window that triggers auto-compaction.")
    warn_at: float = Field(0.6, description="Fraction of the context window at which the meter warns.")
    strip_reasoning_after_turns: int = Field(3, ge=0, description="Prune reasoning older than N user turns; 0 = off.")
    aggregate_developer_loops: bool = Field(True, description="Collapse long edit/exec runs at compaction.")
    max_loop_steps_before_aggregate: int = Field(5, ge=2, description="Run length that triggers aggregation.")
    developer_capabilities: list[str] = Field(["mutating", "exec"], description="Tool capabilities counted as developer-loop steps.")
    keep_last_messages: int = Field(10, ge=0, description="Messages kept verbatim at compaction (moved to whole tool pairs).")
    error_output_cap_chars: int = Field(2000, ge=0, description="Characters of each error output kept verbatim at compaction (0 = no cap).")


class EmbeddedSettings(BaseModel):
    """The ``[embedded]`` section: the offline local model."""

    tools: Literal["read-only", "all"] = Field("read-only", description="read-only (read, grep, glob) or all: which tools the small local model gets.")
    max_turns: int = Field(6, ge=1, description="Cap on tool steps for the small local model.")
    context_tokens: int = Field(4096, ge=512, description="llama.cpp context size (tokens).")
    max_reply_tokens: int = Field(256, ge=16, description="Cap on tokens generated per reply.")


class ReminderSettings(BaseModel):
    """The ``[reminders]`` section: event-driven reminders appended to tool results."""

    enabled: bool = Field(True, description="false turns reminders (and their system-prompt block) off.")
    rules: list[dict[str, Any]] | None = Field(
        None, description="Replaces the default rules: [{id, trigger: after_edit|after_git|external_change, text}].")


class PermissionRuleSettings(BaseModel):
    """The ``[permissions]`` section: rules applied before asking (agent/permission_rules.py).

    A rule is a bash command prefix in words (``pytest``, ``git status``) or a tool
    (``tool:edit``; for tools other than bash the bare name works too). Deny beats allow; a bash
    line is allowed only when every command in it matches an allow rule. A project
    ``.opencli.toml`` may add deny rules but not allow rules.
    """

    allow: list[str] = Field(default_factory=list, description="Rules that run without asking (e.g. [\"pytest\", \"git status\"]).")
    deny: list[str] = Field(default_factory=list, description="Rules that are always refused (e.g. [\"rm -rf\", \"git push\"]).")


class Settings(BaseSettings):
    """All settings. Every field can be set in TOML, as ``OPENCLI_<NAME>`` or by a CLI flag."""

    model_config = SettingsConfigDict(
        env_prefix="OPENCLI_",
        env_nested_delimiter="__",
        extra="ignore",
        validate_default=True,
    )

    model: str | None = Field(None, description="litellm model name; unset picks one from the API keys present, else the embedded model.")
    api_base: str | None = Field(None, description="Base URL of an OpenAI-compatible server (user file, env or flag only).")
    max_turns: int = Field(50, ge=1, description="Stop after this many steps that asked for tools.")
    permission_mode: PermissionMode = Field(PermissionMode.ASK, description="ask, auto-edit, full-auto or read-only.")
    max_tool_output: int = Field(20000, ge=0, description="Cap on bash/grep/glob output sent to the model (characters; 0 = no cap).")
    context_window: int | None = Field(None, ge=1, description="Override of the model's context window (tokens).")
    bash_timeout: float = Field(120.0, gt=0, description="Default time limit of the bash tool (seconds).")
    request_timeout: float = Field(600.0, gt=0, description="Time limit of one model call (seconds).")
    max_retries: int = Field(4, ge=0, description="Retries of a transient provider error.")
    theme: str = Field("opencli-dark", description="Textual theme name (themes/*.toml or a built-in).")
    temperature: float | None = Field(None, ge=0, le=2, description="Sampling temperature; unset uses the provider's default.")
    think_tool: Literal["auto", "on", "off"] = Field(
        "auto", description="auto: offer the no-op think tool only to models without native reasoning (litellm's model info); on / off force it.")
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    embedded: EmbeddedSettings = Field(default_factory=EmbeddedSettings)
    reminders: ReminderSettings = Field(default_factory=ReminderSettings)
    permissions: PermissionRuleSettings = Field(default_factory=PermissionRuleSettings)

    @field_validator("max_tool_output", "context_window", "max_turns", mode="before")
    @classmethod
    def _int_like(cls, value: Any) -> Any:
        if isinstance(value, str):
            stripped = value.strip().replace("_", "")
            if stripped.lstrip("-").isdigit():
                return int(stripped)
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Files are merged by load_settings (below env, above defaults); see _build.
        return (init_settings, env_settings)

    def resolved_model(self) -> str:
        """Return the model to use: the configured one, else one chosen from the API keys in the
        environment (OpenAI, Anthropic, Gemini), else the embedded offline model."""
        if self.model:
            return self.model
        if os.environ.get("OPENAI_API_KEY"):
            return "openai/gpt-4.1"
        if os.environ.get("ANTHROPIC_API_KEY"):
            return "anthropic/claude-sonnet-4-5"
        if os.environ.get("GEMINI_API_KEY"):
            return "gemini/gemini-2.5-flash"
        return EMBEDDED_MODEL


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
    if "permission_mode" in project:
        try:
            wanted = PermissionMode(project["permission_mode"])
            current = PermissionMode(user.get("permission_mode", PermissionMode.ASK.value))
        except ValueError:
            return project  # validation reports the bad value with its name
        if _STRICTNESS[wanted] > _STRICTNESS[current]:
            project.pop("permission_mode")
            notices.append(f".opencli.toml may not loosen permission_mode to {wanted.value}; ignored.")
    return project


def _restrict_project_rules(project: dict[str, Any], user: dict[str, Any], notices: list[str]) -> None:
    """A project ``[permissions]`` section may only tighten: its ``allow`` rules are dropped (with a
    notice) and its ``deny`` rules are added to the user's (not replacing them)."""
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
    user_section = user.get("permissions") if isinstance(user.get("permissions"), dict) else {}
    user_deny = user_section.get("deny") or []
    project_deny = section.get("deny") or []
    if isinstance(user_deny, list) and isinstance(project_deny, list):
        section["deny"] = list(dict.fromkeys([*user_deny, *project_deny]))
    if "allow" in user_section:
        section["allow"] = user_section["allow"]  # the merge keeps the user's allow rules
    project["permissions"] = section


def load_settings(
    workspace: Path,
    flags: dict[str, Any] | None = None,
    notices: list[str] | None = None,
) -> Settings:
    """Build the settings for ``workspace`` from every source.

    ``flags`` holds CLI values (``None`` values are ignored). Notices about ignored project keys are
    appended to ``notices``. Raises ``ConfigError`` (one line naming the setting) on invalid input.
    """
    notices = notices if notices is not None else []
    user_path, project_path = user_config_path(), Path(workspace) / PROJECT_FILE
    user_raw, project_raw = _read_toml(user_path), _read_toml(project_path)
    _unknown_file_keys(user_raw, user_path, notices)
    _unknown_file_keys(project_raw, project_path, notices)
    _unknown_env_names(notices)
    user = {k.replace("-", "_"): v for k, v in user_raw.items()}
    project = _restrict_project(project_raw, user, notices)
    files = _merge(user, project)
    env_keys = {k[len("OPENCLI_"):].lower().split("__")[0] for k in os.environ if k.startswith("OPENCLI_")}
    # Env beats files: drop file values that env sets, then let pydantic-settings read env.
    file_values = {k: v for k, v in files.items() if k not in env_keys or isinstance(v, dict)}
    flag_values = {k: v for k, v in (flags or {}).items() if v is not None}
    try:
        settings = _build(file_values, flag_values)
        _check_reminder_rules(settings)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        value = err.get("input")
        raise ConfigError(f"invalid setting {loc}={value!r}: {err['msg']} "
                          f"(env OPENCLI_{loc.upper().replace('.', '__')}, config key {loc})") from None
    return settings


def _check_reminder_rules(settings: Settings) -> None:
    """Raise ``ConfigError`` when ``[reminders] rules`` is not a valid rule list."""
    from .reminders import rules_from_config

    try:
        rules_from_config(settings.reminders.rules)
    except ValueError as exc:
        raise ConfigError(f"invalid setting reminders.rules: {exc}") from None


def _build(file_values: dict[str, Any], flag_values: dict[str, Any]) -> Settings:
    # Precedence within pydantic-settings: init kwargs > env. Files must sit below env, so build
    # from env first and then overlay files (for keys env did not set) and flags.
    from_env = Settings()
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

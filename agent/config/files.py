"""Where the config files are, and a fast read of single keys from them (no validation).

``agent.config`` validates settings with pydantic-settings; importing it costs about 100 ms.
The TUI needs one value before its first paint (the theme) and must not pay that, so the file
locations and ``peek_setting`` live here, free of pydantic. Places (DESIGN.md 5b): the user file
is ``$OPENCLI_CONFIG`` or ``<platformdirs user config dir>/opencli/config.toml``; the project file
is ``.opencli.toml`` at the workspace root.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import platformdirs

APP_NAME = "opencli"
PROJECT_FILE = ".opencli.toml"


def user_config_path() -> Path:
    """Return the user config file: ``$OPENCLI_CONFIG`` or ``<user config dir>/opencli/config.toml``."""
    env = os.environ.get("OPENCLI_CONFIG")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


def user_data_dir() -> Path:
    """Return the user data folder (sessions live under ``sessions/``); ``$OPENCLI_DATA_DIR`` overrides."""
    env = os.environ.get("OPENCLI_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME))


def read_toml(path: Path) -> dict[str, Any]:
    """Return the TOML table in ``path`` ({} when there is no such file).

    Raises ``tomllib.TOMLDecodeError``, ``OSError`` or ``UnicodeDecodeError`` for an unreadable or
    invalid file; ``agent.config`` turns those into a ``ConfigError`` naming the file."""
    if not path.is_file():
        return {}
    with path.open("rb") as fh:
        return tomllib.load(fh)


def peek_setting(workspace: Path, name: str) -> Any | None:
    """Return the top-level setting ``name`` as the precedence would give it, or None when unset:
    env ``OPENCLI_<NAME>`` first, then the project file, then the user file (for settings that
    have no CLI flag, such as ``theme``).

    A best-effort read for values needed before the settings are validated (the theme of the
    first paint): unreadable files count as unset, nothing is validated, and ``load_settings``
    stays the authority (its value replaces this one once loaded)."""
    env = os.environ.get(f"OPENCLI_{name.upper()}")
    if env:
        return env
    for path in (Path(workspace) / PROJECT_FILE, user_config_path()):
        try:
            value = read_toml(path).get(name)
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
            continue
        if value is not None:
            return value
    return None

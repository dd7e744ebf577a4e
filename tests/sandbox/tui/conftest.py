"""The TUI fixtures (an isolated environment, a scripted app, waiting helpers) for the sandbox's
TUI tests; the sandbox mode each test needs is set by the test (the TUI fixtures pin it off)."""

from tests.tui.conftest import isolated_tui_env, make_app, ui, workspace  # noqa: F401

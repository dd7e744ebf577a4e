"""A coloured unified diff, as edit and write tool blocks show it.

``DiffView`` renders at paint time from the current theme's ``$diff-added``, ``$diff-removed``
and ``$diff-hunk`` variables, so it follows a theme switch. The diff is plain text: never
parsed as markup.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from .plain_output import clean_output

#: Diff lines shown; a longer diff ends with a one-line note.
MAX_DIFF_LINES = 300


def diff_to_text(diff: str, colours: dict[str, str], max_lines: int = MAX_DIFF_LINES) -> Text:
    """Return ``diff`` as a styled ``Text``.

    ``colours`` maps ``diff-added``, ``diff-removed`` and ``diff-hunk`` to colour strings.
    File headers (``---``/``+++``) are bold, ``+``/``-`` lines coloured, ``@@`` lines in the hunk
    colour.
    """
    added = Style(color=colours.get("diff-added", "green"))
    removed = Style(color=colours.get("diff-removed", "red"))
    hunk = Style(color=colours.get("diff-hunk", "cyan"))
    lines = clean_output(diff).replace("\x1b", "").rstrip("\n").split("\n")
    out = Text()
    for i, line in enumerate(lines[:max_lines]):
        if i:
            out.append("\n")
        if line.startswith(("+++", "---")):
            out.append(line, Style(bold=True))
        elif line.startswith("@@"):
            out.append(line, hunk)
        elif line.startswith("+"):
            out.append(line, added)
        elif line.startswith("-"):
            out.append(line, removed)
        else:
            out.append(line)
    if len(lines) > max_lines:
        out.append(f"\n... {len(lines) - max_lines} more diff lines", style="dim italic")
    return out


def diff_stats(diff: str) -> tuple[int, int]:
    """Return ``(added, removed)`` line counts of a unified diff, as the edit tools count them
    (``agent.tools.diffs.diff_counts``: lines inside hunks; a removed ``-- comment`` counts)."""
    from agent.tools.diffs import diff_counts

    return diff_counts(diff)


class DiffView(Widget):
    """Shows one unified diff, coloured with the theme's diff variables."""

    DEFAULT_CSS = """
    DiffView { height: auto; }
    """

    def __init__(self, diff: str, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.diff = diff

    def render(self) -> Text:
        """Render the diff with the current theme's colours."""
        return diff_to_text(self.diff, getattr(self.app, "theme_variables", {}) or {})

"""The markdown fallback: a plan read from a model's text answer (a numbered or bulleted checklist
with optional file, why and note fields, and risk / assumption sections) when it did not call
``submit_plan``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from .model import Plan, PlanStep, one_line, normalize_path

_BOX_STATUS = {" ": "pending", "": "pending", "x": "done", "X": "done", "~": "in_progress", ">": "in_progress",
               "/": "in_progress", "-": "skipped"}


# ============================================================================ markdown fallback
_HEADING = re.compile(r"^\s{0,3}(?P<level>#{1,6})\s+(?P<text>.*?)\s*#*\s*$")
_LABEL = re.compile(r"^\s{0,3}(?:\*\*|__)?(?P<key>[A-Za-z][A-Za-z ()]{1,40}?)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*"
                    r"(?P<value>.*)$")
_ITEM = re.compile(r"^(?P<indent>\s*)(?P<marker>\d{1,2}[.)]|[-*+])\s+(?:\[(?P<box>[ xX~>/-])\]\s*)?(?P<text>.*)$")
_FIELD = re.compile(r"^(?:[-*+]\s+)?(?:\*\*|__|\*|_)?(?P<key>files?|paths?|why|rationale|reason|note)"
                    r"(?:\*\*|__|\*|_)?\s*:\s*(?:\*\*|__)?\s*(?P<value>.*)$", re.IGNORECASE)
_INLINE_FILES = re.compile(r"\s*[(\[]?\s*(?:files?|paths?)\s*:\s*(?P<files>[^)\]]+?)\s*[)\]]?\s*$", re.IGNORECASE)
_INLINE_WHY = re.compile(r"\s*(?:[—–-]+|;|\.)?\s*(?:\*\*|_)?(?:why|rationale|because)(?:\*\*|_)?\s*:\s*(?P<why>.+)$",
                         re.IGNORECASE)
_BACKTICKED = re.compile(r"`([^`\s]+)`")
_PATHLIKE = re.compile(r"(?:/|\.[A-Za-z0-9]{1,8}$)")
_STEP_SECTION_WORDS = ("step", "plan", "task", "todo", "checklist", "change")


def _section_for(heading: str) -> str:
    """The section a heading or label opens: risks, assumptions, undeclared (short headings naming
    them) or steps (anything else)."""
    low = heading.lower()
    if len(low.split()) > 5:
        return "steps"
    if "risk" in low:
        return "risks"
    if "assumption" in low:
        return "assumptions"
    if "outside the plan" in low or "undeclared" in low:
        return "undeclared"
    return "steps"


def _clean(text: str) -> str:
    text = text.strip()
    text = re.sub(r"^(\*\*|__)(.+?)\1", r"\2", text)
    return one_line(text)


def _split_files(value: str) -> list[str]:
    parts = re.split(r",|;|\s+and\s+|\s{2,}", value)
    out = []
    for part in parts:
        path = normalize_path(part)
        if path and path.lower() not in ("none", "n/a", "-", "(none)"):
            out.append(path)
    return out


@dataclass
class _Entry:
    indent: int
    strong: bool  # numbered or checkbox item
    status: str
    text: str
    files: list[str] = dataclasses.field(default_factory=list)
    why: list[str] = dataclasses.field(default_factory=list)
    note: str = ""
    details: list[str] = dataclasses.field(default_factory=list)


def parse_markdown_plan(text: str) -> Plan | None:
    """Read a plan from free text: the fallback when the model answers with a markdown checklist
    instead of calling ``submit_plan``.

    Understood: a title (the first heading that is not a section name, or a ``Title:`` line,
    ``Plan:`` prefix dropped); steps as numbered or checkbox items (plain bullets only when there are
    none), with ``Files:`` / ``Why:`` / ``Note:`` lines or nested bullets under them, inline
    ``(files: a.py, b.py)`` and backticked paths; ``Risks`` and ``Assumptions`` sections (headings,
    bold or ``Label:`` lines). Checkboxes give the status (``[x]`` done, ``[~]`` in progress, ``[-]``
    skipped). Returns ``None`` when no step is found. Never raises.
    """
    title = ""
    section = "none"
    entries: list[_Entry] = []
    lists: dict[str, list[str]] = {"risks": [], "assumptions": [], "undeclared": []}
    current: _Entry | None = None
    in_fence = False
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.strip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or not line.strip():
            continue
        heading = _HEADING.match(line)
        if heading:
            head = _clean(heading.group("text"))
            kind = _section_for(head)
            low = head.lower().rstrip(":")
            top = not title and not entries and low not in _STEP_SECTION_WORDS + ("steps",)
            if top and (kind == "steps" or len(heading.group("level")) == 1):
                title = re.sub(r"^(?:implementation\s+)?plan\s*[:\-–—]\s*", "", head, flags=re.IGNORECASE)
                kind = "steps"
            section, current = kind, None
            continue
        item = _ITEM.match(line)
        field = _FIELD.match(line.strip())
        if current is not None and field and (item is None or len(item.group("indent")) > current.indent
                                              or item.group("marker") in "-*+"):
            _add_field(current, field.group("key").lower(), field.group("value"))
            continue
        if item is None:
            label = _LABEL.match(line)
            if label and len(line) - len(line.lstrip()) < 2:
                key = label.group("key").strip().lower()
                value = _clean(label.group("value"))
                if key == "title" and not title:
                    title = value
                    continue
                if any(word in key for word in ("risk", "assumption")) or key in _STEP_SECTION_WORDS + ("steps",):
                    section, current = _section_for(key), None
                    if value and section in lists and value.lower() not in ("none", "n/a"):
                        lists[section].append(value)
                    continue
            if current is not None and line[:1].isspace():
                current.details.append(_clean(line))
            else:
                current = None
            continue
        indent = len(item.group("indent").expandtabs(4))
        body = _clean(item.group("text"))
        if section in lists:
            if body:
                lists[section].append(body)
            continue
        if current is not None and indent > current.indent:
            current.details.append(body)
            continue
        strong = item.group("marker")[0].isdigit() or item.group("box") is not None
        current = _Entry(indent=indent, strong=strong, status=_BOX_STATUS.get(item.group("box") or "", "pending"),
                         text=body)
        entries.append(current)
    chosen = [e for e in entries if e.strong] or entries
    steps = [_entry_to_step(e) for e in chosen]
    steps = [s for s in steps if s.description]
    if not steps:
        return None
    return Plan(title=title or "Plan", steps=steps, risks=lists["risks"], assumptions=lists["assumptions"],
                undeclared_files=[normalize_path(p) for p in lists["undeclared"]])


def _add_field(entry: _Entry, key: str, value: str) -> None:
    if key.startswith(("file", "path")):
        entry.files += _split_files(value)
    elif key == "note":
        entry.note = _clean(value)
    else:
        entry.why.append(_clean(value))


def _entry_to_step(entry: _Entry) -> PlanStep:
    text = entry.text
    files = list(entry.files)
    why = list(entry.why)
    inline_why = _INLINE_WHY.search(text)
    if inline_why:
        why.insert(0, _clean(inline_why.group("why")))
        text = text[: inline_why.start()]
    inline_files = _INLINE_FILES.search(text)
    if inline_files:
        files += _split_files(inline_files.group("files"))
        text = text[: inline_files.start()]
    text = text.strip().rstrip(" -—–:")
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    details = []
    for detail in entry.details:
        found = [p for p in _BACKTICKED.findall(detail) if _PATHLIKE.search(p)]
        if found and not entry.files:
            files += [normalize_path(p) for p in found]
        details.append(detail)
    if not files:
        files = [normalize_path(p) for p in _BACKTICKED.findall(text) if _PATHLIKE.search(p)]
    rationale = " ".join(why) or " ".join(details)
    return PlanStep(description=one_line(text), files=list(dict.fromkeys(files)), rationale=rationale,
                    status=entry.status, note=entry.note)  # type: ignore[arg-type]

"""The reminder rules: one shared list (``DEFAULT_RULES``, replaced by ``[reminders] rules`` in the
config), each an ``id``, a ``trigger`` and a short ``text``; ``rules_from_config`` validates them,
``system_prompt_rules`` states them once in the system prompt.
"""

from __future__ import annotations

from typing import Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Trigger = Literal["after_edit", "after_git", "external_change"]

#: How each trigger is introduced when the rules are listed in the system prompt.
TRIGGER_PHRASES: dict[str, str] = {
    "after_edit": "After you write or edit a file",
    "after_git": "After a bash command that runs git",
    "external_change": "When a file you read changes on disk",
}


class ReminderRule(BaseModel):
    """One rule: ``id`` (unique, names the rule in config and in dedup keys), ``trigger`` (see the
    module docstring) and ``text`` (short; ``{path}`` is replaced by the file's path for triggers
    that have one, and by "the file" in the system prompt)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = Field(min_length=1)
    trigger: Trigger
    text: str = Field(min_length=1, max_length=300)

    def render(self, path: str | None = None) -> str:
        """The reminder text, with ``{path}`` filled in (``"the file"`` when ``path`` is None)."""
        return self.text.replace("{path}", path if path else "the file")


DEFAULT_RULES: tuple[ReminderRule, ...] = (
    ReminderRule(id="test-after-edit", trigger="after_edit",
                 text="run the relevant tests, and don't widen the scope of the change"),
    ReminderRule(id="no-unasked-commit", trigger="after_git",
                 text="never commit or push unless the user asked"),
    ReminderRule(id="reread-after-external-change", trigger="external_change",
                 text="{path} changed on disk since you read it; read it again before editing"),
)


def rules_from_config(items: Iterable[dict[str, Any]] | None) -> list[ReminderRule]:
    """Build the rule list from config data: ``None`` gives ``DEFAULT_RULES``; otherwise each dict
    is ``{"id", "trigger", "text"}`` and the list replaces the defaults (an empty list turns
    reminders off). Raises ``ValueError`` with one line naming the bad rule (invalid field,
    unknown trigger, duplicate id)."""
    if items is None:
        return list(DEFAULT_RULES)
    rules: list[ReminderRule] = []
    for index, item in enumerate(items):
        try:
            rule = item if isinstance(item, ReminderRule) else ReminderRule.model_validate(item)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "rule"
            raise ValueError(f"reminders.rules[{index}].{where}: {err['msg']}") from None
        if any(r.id == rule.id for r in rules):
            raise ValueError(f"reminders.rules[{index}].id: duplicate rule id {rule.id!r}")
        rules.append(rule)
    return rules


def system_prompt_rules(rules: Iterable[ReminderRule]) -> str:
    """Return the rules as a short block for the system prompt (one line per rule), or ``""`` when
    there are none. It states each rule once; the reminders repeat them only after the event."""
    lines = [f"- {TRIGGER_PHRASES[r.trigger]}: {r.render(None)}." for r in rules]
    if not lines:
        return ""
    return "\n".join(["Standing rules (a tool result may end with a [reminder: ...] line restating one):", *lines])

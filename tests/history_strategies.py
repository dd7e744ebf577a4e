"""Random conversation histories for property tests (hypothesis): ``events`` draws a list of
steps (user messages, assistant messages with or without tool calls, stray tool results, and
assistant steps followed by all their results); ``build(events)`` turns them into records."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from agent.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage

IDS = ["a", "b", "c", "d"]  # a small pool: ids are reused across steps, as some providers do
TOOLS = ["read", "edit", "bash", "grep"]
TEXTS = ["", "ok", "<think>r</think>answer", "<think>unclosed", "use `<think>` here", "4 passed",
         "FAILED x\n1 failed", "Traceback (most recent call last):\nValueError: v"]

user_ev = st.builds(lambda t: ("user", t), st.sampled_from(["task", "more", "constraint: keep it", "go on"]))
assistant_ev = st.builds(
    lambda ids, names, text, rc: ("assistant", ids, names, text, rc),
    st.lists(st.sampled_from(IDS), max_size=3, unique=True),
    st.lists(st.sampled_from(TOOLS), min_size=3, max_size=3),
    st.sampled_from(TEXTS), st.sampled_from([None, "reasoning"]))
tool_ev = st.builds(lambda i, t: ("tool", i, t), st.sampled_from(IDS + ["zz"]), st.sampled_from(TEXTS))
# "answered" expands to an assistant step followed by all its results (the common, valid case).
answered_ev = st.builds(lambda a: ("answered",) + a[1:], assistant_ev)
events = st.lists(st.one_of(user_ev, assistant_ev, tool_ev, answered_ev, answered_ev, answered_ev), max_size=40)


def build(evs):
    msgs = []
    for ev in evs:
        if ev[0] == "user":
            msgs.append(UserMessage(content=ev[1]))
        elif ev[0] == "tool":
            msgs.append(ToolResultMessage(tool_call_id=ev[1], name="read", content=ev[2]))
        else:
            _, ids, names, text, rc = ev
            calls = [ToolCall(id=i, name=names[k], arguments=json.dumps({"path": f"f{k}.py", "command": "pytest -q"}))
                     for k, i in enumerate(ids)]
            msgs.append(AssistantMessage(content=text or None, tool_calls=calls, reasoning_content=rc))
            if ev[0] == "answered":
                msgs += [ToolResultMessage(tool_call_id=c.id, name=c.name, content=text or "ok") for c in calls]
    return msgs

"""The user is called back (bell or OSC 9) when a long turn ends or a prompt waits while the
terminal is not focused, and never while it is focused or with notify = "off"."""

from __future__ import annotations

from tui.attention import LONG_TURN_S, Attention


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_long_turn_that_ends_unseen_rings_once():
    sent: list[str] = []
    clock = Clock()
    attention = Attention(sent.append, "bell", clock)
    attention.turn_started_now()
    clock.now += LONG_TURN_S + 1
    assert not attention.turn_ended(), "focused: nothing"
    attention.focused = False
    attention.turn_started_now()
    clock.now += 2
    assert not attention.turn_ended(), "a short turn: nothing"
    attention.turn_started_now()
    clock.now += LONG_TURN_S + 1
    assert attention.turn_ended() and sent == ["\x07"]


def test_osc9_and_off():
    sent: list[str] = []
    attention = Attention(sent.append, "osc9")
    attention.focused = False
    assert attention.prompt_waiting() and sent[-1].startswith("\x1b]9;") and sent[-1].endswith("\x07")
    attention.mode = "off"
    assert not attention.prompt_waiting() and len(sent) == 1


async def test_the_app_follows_terminal_focus_and_rings_for_a_permission_prompt(make_app, ui) -> None:
    from textual import events

    app, _ = make_app([{"tool_calls": [{"name": "write", "arguments": {"path": "n.txt", "content": "x"}}]},
                       {"content": "done"}], permission_mode="ask")
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_prepared(pilot, app)
        sent: list[str] = []
        app.attention.write = sent.append
        app.post_message(events.AppBlur())
        await pilot.pause()
        assert app.attention.focused is False
        await ui.submit(pilot, "write a note")
        await ui.wait_for(pilot, lambda: bool(sent), what="the bell for the permission prompt")
        assert sent == ["\x07"]
        app.post_message(events.AppFocus())
        await pilot.pause()
        assert app.attention.focused is True
        await pilot.press("y")
        await ui.wait_turn(pilot, app)

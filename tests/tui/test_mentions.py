"""``@path`` attaches a file's content to the prompt (as ``read`` returns it), the conversation
says what was attached, and Tab completes the path from the workspace's files, fuzzily."""

from __future__ import annotations

from agent.loop.mentions import attach_mentions, mentioned_paths
from tui.path_completion import complete_mention

FILES = ["README.md", "calc.py", "src/calculator/core.py", "tests/test_calc.py"]


def test_mentions_are_found_once_without_trailing_punctuation():
    assert mentioned_paths("look at @calc.py, then @src/x.py and @calc.py. mail a@b.c") == ["calc.py", "src/x.py"]


def test_attaching_reads_each_file_and_leaves_the_others():
    def read(path):
        return "     1\tdef add(a, b):\n     2\t    return a - b\n[end of file: 2 lines in total]" if path == "calc.py" else None

    text, attached = attach_mentions("why does @calc.py subtract? see @nowhere", read)
    assert text.startswith("why does @calc.py subtract? see @nowhere\n\n<file path=\"calc.py\">\n     1\tdef add")
    assert [(a.path, a.lines) for a in attached] == [("calc.py", 2)]
    assert attach_mentions("no mention", read) == ("no mention", [])


def test_tab_completion_is_fuzzy_and_ranks_names_first():
    assert complete_mention("fix @calc", FILES).text == "fix @calc.py "  # the best of three: Tab picks it
    assert complete_mention("fix @calc", FILES).candidates[0] == "calc.py"
    assert complete_mention("fix @core", FILES).text == "fix @src/calculator/core.py "
    assert complete_mention("fix @tstcalc", FILES).text == "fix @tests/test_calc.py "
    assert complete_mention("fix @calc.py", FILES).text == "fix @calc.py "
    assert complete_mention("no mention", FILES) is None
    assert complete_mention("@zzz", FILES).candidates == ()


async def test_a_mentioned_file_goes_with_the_prompt(make_app, workspace, ui) -> None:
    from tui.widgets.blocks import NoticeBlock
    from tui.widgets.prompt_input import PromptInput

    app, provider = make_app([{"content": "It subtracts."}])
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_prepared(pilot, app)
        prompt = app.query_one(PromptInput)
        await ui.wait_for(pilot, lambda: "calc.py" in prompt.workspace_files, what="the file list")
        prompt.focus()
        await pilot.press(*"why @cal")
        assert "@calc.py" in prompt.border_subtitle, "the matches show as you type"
        await pilot.press("tab")
        assert prompt.text == "why @calc.py " and not prompt.border_subtitle
        await pilot.press("enter")
        await ui.wait_turn(pilot, app)
        content = provider.requests[0].messages[-1]["content"]
        assert '<file path="calc.py">' in content and "return a - b" in content
        assert any(b.message.startswith("Attached calc.py (2 lines)") for b in app.query(NoticeBlock))

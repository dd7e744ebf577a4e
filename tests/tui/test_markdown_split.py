"""Where a long streaming reply continues in a new block (tui/markdown_split.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.markdown_split import BlockCut, find_cut

LIMIT, HARD = 100, 400


def split_all(text: str, limit: int = LIMIT, hard: int = HARD) -> list[tuple[str, BlockCut | None]]:
    """Split ``text`` the way the event handler does: (part, cut that started it) pairs."""
    parts: list[tuple[str, BlockCut | None]] = []
    carry, started_by, rest = "", None, text
    while True:
        cut = find_cut(carry + rest, limit + len(carry), hard)
        if cut is None:
            parts.append((rest, started_by))
            return parts
        index = cut.index - len(carry)
        assert index > 0, "a cut always keeps some text"
        parts.append((rest[:index], started_by))
        carry, started_by, rest = cut.carry, cut, rest[index:]


class TestBoundaries:
    def test_nothing_before_the_limit(self) -> None:
        assert find_cut("short\n\ntext\n", LIMIT, HARD) is None
        assert find_cut("a" * 97 + "\n\nb\n", LIMIT, HARD) is None  # "b" starts before the limit

    def test_paragraph_break_past_the_limit(self) -> None:
        text = "a" * 50 + "\n\n" + "b" * 60 + "\n\nrest\n"
        cut = find_cut(text, LIMIT, HARD)
        assert cut == BlockCut(text.index("rest"), paragraph_break=True)

    def test_the_next_line_must_be_complete_and_not_indented(self) -> None:
        assert find_cut("a" * 120 + "\n\nres", LIMIT, HARD) is None  # "res" may become anything
        text = "- item " + "a" * 120 + "\n\n  more of the item\n\nnext\n"
        assert text[find_cut(text, LIMIT, HARD).index:] == "next\n"

    def test_inside_a_fence_the_opener_is_carried(self) -> None:
        text = "Intro\n\n```python\n" + "".join(f"x{i} = {i}\n" for i in range(40))
        cut = find_cut(text, LIMIT, HARD)
        assert cut.in_code and cut.carry == "```python\n"
        assert text[:cut.index].endswith("\n") and text[cut.index:].startswith("x")

    def test_not_before_the_closing_fence(self) -> None:
        text = "```\n" + "a" * 120 + "\n```\n"
        assert find_cut(text, LIMIT, HARD) is None
        text += "\nafter\n"
        cut = find_cut(text, LIMIT, HARD)
        assert text[cut.index:] == "after\n" and not cut.in_code

    def test_a_fence_closes_only_with_its_own_marker(self) -> None:
        text = "~~~~\n" + "x\n" * 60 + "```\n" + "y\n" * 30
        cut = find_cut(text, LIMIT, HARD)
        assert cut.in_code and cut.carry == "~~~~\n"

    def test_between_list_items(self) -> None:
        text = "Steps:\n" + "".join(f"- item {i} text\n" for i in range(20))
        cut = find_cut(text, LIMIT, HARD)
        assert text[cut.index:].startswith("- item") and not cut.paragraph_break

    def test_numbers_other_than_one_do_not_interrupt_a_paragraph(self) -> None:
        text = "".join(f"line\n{i}. not a list\n" for i in range(2, 30))
        assert find_cut(text[:HARD - 1], LIMIT, HARD) is None

    def test_not_inside_a_quote(self) -> None:
        # "> a" lines run together into one quoted paragraph: a cut would re-wrap it.
        text = "> quoted line\n" * 20
        assert find_cut(text, LIMIT, HARD) is None

    def test_not_right_after_a_fence_opener(self) -> None:
        text = "p" * 120 + "\n```python\nx = 1\ny = 2\n```\n"
        cut = find_cut(text, LIMIT, HARD)
        assert cut is None or not text[:cut.index].endswith("```python\n")
        assert find_cut("a" * 100 + "\n```python\nx = 1\ny = 2\n", LIMIT, HARD).index == len("a" * 100 + "\n```python\nx = 1\n")

    def test_not_inside_a_fence_or_table_of_a_list_item(self) -> None:
        text = "1. Install:\n\n   ```bash\n" + "".join(f"   pip install p{i}\n" for i in range(15)) + "   ```\n"
        assert find_cut(text, LIMIT, HARD) is None
        text = "- item\n\n  | a | b |\n  |---|---|\n" + "".join(f"  | {i} | x |\n" for i in range(25))
        assert find_cut(text, LIMIT, HARD) is None

    def test_an_indented_fence_line_inside_code_does_not_close_it(self) -> None:
        text = '```python\n"""Example:\n\n    ```\n    f()\n    ```\n"""\n\n' + "".join(f"x{i} = {i}\n" for i in range(30))
        cut = find_cut(text, LIMIT, HARD)
        assert cut.in_code and cut.carry == "```python\n"

    def test_not_inside_a_raw_html_block(self) -> None:
        text = "<pre>\n" + "line\n\n" * 30 + "</pre>\n\nafter\n"
        cut = find_cut(text, LIMIT, HARD)
        assert text[cut.index:] == "after\n"

    def test_table_rows_carry_the_header(self) -> None:
        header = "| n | square |\n|---|---|\n"
        text = header + "".join(f"| {i} | {i * i} |\n" for i in range(30))
        cut = find_cut(text, LIMIT, HARD)
        assert cut.carry == header and text[cut.index:].startswith("| ")

    def test_forced_cut_in_one_huge_paragraph(self) -> None:
        text = "word " * 70
        assert find_cut(text, LIMIT, HARD) is None  # under the hard limit: wait for a boundary
        text = "word " * 100 + "end"
        cut = find_cut(text, LIMIT, 500)
        assert cut is not None and text[cut.index - 1] == " " and cut.index >= LIMIT

    def test_forced_cut_in_one_huge_line_without_spaces(self) -> None:
        assert find_cut("x" * 500, LIMIT, HARD) == BlockCut(LIMIT)

    def test_forced_cut_inside_a_fence_carries_the_opener(self) -> None:
        text = "```js\n" + "x" * 500
        assert find_cut(text, LIMIT, HARD) == BlockCut(LIMIT, "```js\n", in_code=True)


_LINES = st.sampled_from([
    "", "", "text words here", "more text", "- item", "* item", "1. first", "2. second", "> quote",
    "```", "```python", "~~~", "    indented code", "  lazy", "| a | b |", "|---|---|", "# Heading",
    "x" * 150, "word " * 40, "y" * 900, "z" * 300 + " " + "z" * 500,
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINES, max_size=80), st.booleans())
def test_parts_join_back_to_the_reply(lines: list[str], trailing_newline: bool) -> None:
    """Whatever the markdown, the parts are the reply (nothing lost or repeated), each stays
    bounded, and a part that starts inside code was cut inside a fence and carries its opener."""
    text = "\n".join(lines) + ("\n" if trailing_newline else "")
    parts = split_all(text)
    assert "".join(part for part, _ in parts) == text
    for part, _started_by in parts[:-1]:
        assert len(part) <= HARD
    for _part, started_by in parts:
        if started_by is not None and started_by.in_code:
            assert started_by.carry.lstrip().startswith(("```", "~~~"))


COLOURS = {"primary": "#6CA6E8", "accent": "#E8B46C", "muted": "#888888", "panel": "#222222"}
PARAGRAPH = "The function reads the config and returns a value. " * 20 + "\n"


def drawn_whole(text: str) -> list[str]:
    from tui.widgets.flat_markdown import render_markdown

    return [line.plain.rstrip() for line in render_markdown(text, 80, COLOURS)]


def drawn_in_parts(text: str, limit: int = 1000, hard: int = 4000) -> list[str]:
    """What the conversation shows: each part drawn on its own, a blank row where the next
    block has a top margin (a cut at a paragraph break)."""
    from tui.widgets.flat_markdown import render_markdown

    parts = split_all(text, limit, hard)
    rows: list[str] = []
    for index, (part, started_by) in enumerate(parts):
        ended_by = parts[index + 1][1] if index + 1 < len(parts) else None
        if started_by is not None and started_by.paragraph_break:
            rows.append("")
        carry = started_by.carry if started_by is not None else ""
        rows += [line.plain.rstrip() for line in render_markdown(
            carry + part, 80, COLOURS, code_continues_above=bool(started_by and started_by.in_code),
            code_continues_below=bool(ended_by and ended_by.in_code))]
    return rows


SAME_WHEN_SPLIT = {
    "paragraphs": "\n".join([PARAGRAPH] * 6),
    "code block": "Here:\n\n```python\n" + "".join(f"value_{i} = compute({i})\n" for i in range(150)) + "```\n\nDone.\n",
    "code after a long paragraph": PARAGRAPH + "```python\nx = 1\ny = 2\n```\n",
    "code ending in blank lines at a seam": "```\n" + "abcdefghi\n" * 100 + "\n```\n",
    "bullet list after a line": "Steps:\n" + "".join(f"- item {i} reads the config\n" for i in range(90)),
    "numbered list": "".join(f"{i}. item number {i} " + "x" * 20 + "\n" for i in range(10, 99)),
    "numbered 1. on every line": "Do this:\n\n" + "".join(f"1. numbered step text {i:03}\n" for i in range(10, 99)),
    "loose numbered list": "".join(f"{i}. **Step {i}**\n\n    " + "Explain the step. " * 12 + "\n\n" for i in range(11, 20)),
    "items whose text is indented too little": "".join(f"{i}. **Step {i}**\n\n   " + "Explain. " * 24 + "\n\n" for i in range(11, 20)),
    "paragraph then list": PARAGRAPH + "\n- first\n- second\n",
    "quote": "".join(f"> quoted line {i} of the note\n" for i in range(60)),
    "code in a quote": "> ```python\n" + "".join(f"> x{i} = compute({i})\n" for i in range(70)) + "> ```\n",
    "code in a list item": "1. Install:\n\n   ```bash\n" + "".join(f"   pip install package-{i}\n" for i in range(60)) + "   ```\n2. Run it\n",
    "indented fence line inside code": '```python\ndef f():\n    """Example:\n\n    ```\n    f()\n    ```\n    """\n\n'
                                       + "".join(f"x{i} = {i}\n" for i in range(120)) + "\ny = 2\n```\n",
    "mixed": "".join(f"## Step {i}\n\nThe function `handler_{i}` reads the **config**.\n\n- first {i}\n- second\n\n"
                     f"```python\ndef handler_{i}(x):\n    return x * {i}\n```\n\n" for i in range(40)),
}


def test_a_split_reply_draws_as_the_whole_reply() -> None:
    """The cuts fall where drawing the parts one under the other shows the same rows as
    drawing the whole reply. Documented exceptions: a table repeats its header, and a numbered
    list whose numbers change width between parts (9 -> 10) shifts by a column, as rich sizes
    the number column per list (so the numbered lists here keep one width)."""
    for name, text in SAME_WHEN_SPLIT.items():
        assert len(split_all(text, 1000, 4000)) > 1 or name in {"quote", "code in a quote", "code in a list item", "numbered 1. on every line"}, name
        assert drawn_in_parts(text) == drawn_whole(text), name


def test_a_split_table_repeats_its_header() -> None:
    header = "| n | square |\n|---|---|\n"
    text = header + "".join(f"| {i} | {i * i} |\n" for i in range(150))
    rows = drawn_in_parts(text)
    assert sum(1 for row in rows if row.split() == ["n", "square"]) == len(split_all(text, 1000, 4000)) > 1
    assert [row.split()[0] for row in rows if row.split() and row.split()[0].isdigit()] == [str(i) for i in range(150)]

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

    def test_between_quote_lines(self) -> None:
        text = "> quoted line\n" * 20
        assert find_cut(text, LIMIT, HARD).index % len("> quoted line\n") == 0

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

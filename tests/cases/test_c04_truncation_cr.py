"""C04: carriage returns and CRLF in tool output (Gemini CLI #6264).

CRLF becomes LF and CR-separated progress frames keep only their last frame before measuring, so
the normalised text fits the budget and nothing is cut; when a cut does happen it never leaves a
bare CR before the marker.
"""

from __future__ import annotations

from pathlib import Path

from agent.context.truncation.truncate import MARKER_RE, split_truncated, truncate_text
from agent.tools.bash import BashArgs, BashTool
from agent.tools.base import ToolContext

FRAMES = "".join(
    f"\rDownloading {n}: {p:3d}% [{'#' * (p // 2):<50}]"
    for n in ("model-a.bin", "model-b.bin", "model-c.bin", "model-d.bin")
    for p in range(101)
)
S = (
    "y" * 5999 + "\r\n" + "Restoring packages...\r\n" + FRAMES
    + "\r\nBuild succeeded.\r\n    0 Warning(s)\r\n    0 Error(s)\r\n"
)


def test_c04_input_is_as_described():
    assert len(S) == 39610 and S[5999:6001] == "\r\n"


def test_c04_must_and_should():
    t = truncate_text(S, 20000).text
    # MUST
    assert len(t) <= 20000 + 400 and "0 Error(s)" in t
    # SHOULD: normalised before truncating
    assert "\r" not in t
    assert t.count("Downloading model-d.bin: 100%") == 1
    assert "  0%" not in t
    assert MARKER_RE.search(t) is None  # the normalised text is under 20k: no truncation notice


def test_c04_forced_cut_never_leaves_bare_cr():
    for budget in range(9000, 9100, 7):  # cuts land at many places, some across CRLF pairs
        result = truncate_text(S * 3, budget)
        assert result.truncated
        head, tail = split_truncated(result.text)
        assert not head.endswith("\r") and "\r" not in result.text


def test_c04_through_bash(tmp_path: Path):
    (tmp_path / "out.txt").write_bytes(S.encode())
    ctx = ToolContext(workspace=tmp_path, output_dir=tmp_path / ".opencli" / "tmp", call_id="c04")
    out = BashTool().run(BashArgs(command="cat out.txt"), ctx)
    assert not out.truncated and out.exit_code == 0
    assert "\r" not in out.text and "0 Error(s)" in out.text
    assert out.text.count("Downloading model-d.bin: 100%") == 1

"""Regenerate the PNG screenshots in this folder from the app running headless.

The pictures come from the snapshot tests (``tests/tui/test_tui_snapshots.py``): they drive the
real app under Textual's Pilot with scripted models and save the SVG that Textual exports. This
script (optionally) reruns those tests to refresh the SVGs, then converts each SVG to PNG with
resvg, using the DejaVu Sans Mono font bundled in ``screenshots/fonts`` (the SVGs ask for Fira
Code, a web font resvg cannot fetch), so the output is the same on every machine.

Usage:
    python screenshots/make_screenshots.py            # convert the current snapshot SVGs
    python screenshots/make_screenshots.py --refresh  # rerun the snapshot tests first
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SNAPSHOTS = ROOT / "tests" / "tui" / "__snapshots__"
FONTS = sorted(str(p) for p in (HERE / "fonts").glob("*.ttf"))
FAMILY = "DejaVu Sans Mono"

#: Snapshot test name -> screenshot file name. Only these are published.
PICTURES = {
    "TestMainScreen.test_mid_turn": "main-mid-turn.png",
    "TestMainScreen.test_idle": "main-idle.png",
    "TestMainScreen.test_after_an_edit": "after-an-edit.png",
    "TestMainScreen.test_permission_prompt": "permission-prompt.png",
    "TestLightTheme.test_idle_light": "main-idle-light.png",
    "TestTruncatedOutput.test_truncated_bash_block": "truncated-output.png",
    "TestTruncatedOutput.test_output_viewer": "output-viewer.png",
    "TestStops.test_max_turns_stop": "max-turns-stop.png",
    "TestThink.test_think_expanded": "think-expanded.png",
}


def svg_to_png(svg_text: str, zoom: float = 1.0) -> bytes:
    """Render Textual's exported SVG to PNG bytes with the bundled monospace font."""
    import resvg_py

    svg_text = re.sub(r"font-family:\s*Fira Code,\s*monospace", f"font-family: {FAMILY}", svg_text)
    svg_text = re.sub(r"@font-face\s*\{[^}]*\}", "", svg_text)
    data = resvg_py.svg_to_bytes(svg_string=svg_text, font_files=FONTS, monospace_family=FAMILY,
                                 sans_serif_family=FAMILY, skip_system_fonts=True, zoom=zoom)
    return bytes(data)


def main(argv: list[str] | None = None) -> int:
    """Convert (and with ``--refresh`` first regenerate) the snapshots; returns an exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refresh", action="store_true", help="rerun the snapshot tests with --snapshot-update first")
    args = parser.parse_args(argv)
    if args.refresh:
        subprocess.run([sys.executable, "-m", "pytest", "-q", "tests/tui/test_tui_snapshots.py",
                        "--snapshot-update"], cwd=ROOT, check=False)
    written = 0
    for test_name, png_name in PICTURES.items():
        matches = list(SNAPSHOTS.rglob(f"{test_name}.svg"))
        if not matches:
            print(f"missing snapshot for {test_name}; run with --refresh", file=sys.stderr)
            continue
        (HERE / png_name).write_bytes(svg_to_png(matches[0].read_text(encoding="utf-8")))
        written += 1
        print(f"wrote screenshots/{png_name}")
    return 0 if written == len(PICTURES) else 1


if __name__ == "__main__":
    sys.exit(main())

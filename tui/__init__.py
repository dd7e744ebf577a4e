"""opencli-tui's front ends: the Textual app (``tui.app``) and the headless runner (``tui.headless``).

This package's ``__init__`` imports nothing heavy, so ``opencli-tui run`` never loads Textual.
"""

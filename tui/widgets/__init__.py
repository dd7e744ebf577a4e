"""Conversation widgets of the opencli-tui app (blocks, tool calls, prompt box, status bar)."""

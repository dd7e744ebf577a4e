"""Widgets of the opencli-tui app (conversation blocks, tool calls, think blocks, stop panel,
prompt box, status bar, sidebar, the file view of the output viewer)."""

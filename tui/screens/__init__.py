"""Screens of the opencli-tui app (permission prompt, help, output viewer)."""

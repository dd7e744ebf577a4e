"""Observability of a session: what each model call cost (``pricing``, ``model_calls``), the
session's running total and its limits (``spending``), the structured session log beside the
journal (``session_log``: records; ``sink``: the event sink that writes them) and the figures
read back from it (``stats``)."""

"""A session on disk: the typed journal records, the journal, resume, per-turn checkpoints (undo), the file watcher and the
app's folder in the workspace."""

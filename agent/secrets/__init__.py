"""Keeping secrets out of the files the app writes: redaction (``redact``, ``stream``), private
files and folders (``private_files``) and the environment commands run with (``env``)."""

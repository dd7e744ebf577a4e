"""Settings: the schema (``settings``), loading from files, env and flags (``loading``), the file
locations (``files``, free of pydantic for the first paint) and the reminder rules."""

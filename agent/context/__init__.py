"""Context management: output truncation, history repair, compaction and related passes."""

"""agent.context.compaction."""

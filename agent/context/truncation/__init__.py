"""agent.context.truncation."""

"""agent.config."""

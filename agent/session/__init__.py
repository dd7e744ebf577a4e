"""agent.session."""

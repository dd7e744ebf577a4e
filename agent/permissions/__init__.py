"""agent.permissions."""

"""agent.permissions.shell."""

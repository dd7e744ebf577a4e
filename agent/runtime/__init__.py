"""agent.runtime."""

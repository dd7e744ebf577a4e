"""agent.loop."""

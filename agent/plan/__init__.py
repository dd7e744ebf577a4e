"""agent.plan."""

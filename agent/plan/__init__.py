"""Plan mode: the plan as data, its markdown fallback parser, prompts, the controller of the
planning pass and the execution (it journals the plan's changes), and the plan tools."""

"""Plan mode: the plan as data, its markdown fallback parser, prompts, journal records, the
controller of the planning pass and the execution, and the plan tools."""

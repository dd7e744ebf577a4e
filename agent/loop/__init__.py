"""The ReAct loop: one user turn in, events out (``agent.Agent``), its settings, the answering of
tool calls, guards, reminders, reply assembly, retry, compaction runs and the system prompt."""

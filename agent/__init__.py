"""opencli-tui's UI-free core: the ReAct loop, providers, tools, context management, sessions.

Nothing in this package imports textual or rich (an import-linter contract and a test check it).
"""

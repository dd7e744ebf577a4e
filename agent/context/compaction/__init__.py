"""Compaction: the one-pass rewrite of the context view (``rewrite``), the summary request and text
(``summary``), the kept tail (``tail``). ``agent.loop.compactor`` runs it for an agent."""

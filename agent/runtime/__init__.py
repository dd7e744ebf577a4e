"""Wiring: ``build.build_session`` makes one ``session.AgentSession`` per conversation from settings
for a workspace."""

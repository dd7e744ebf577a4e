"""Providers: the litellm wrapper, the embedded local model, and the scripted provider for tests."""

"""A long-session harness (issue 11): scripted sessions shaped like real work, run in-process
against the real tools, and a checker (the judge) applied to every request the model received.

- ``generator``: the shapes (one long turn, many short turns, plan then execute, resume midway,
  reasoning, huge outputs, failing tests, a late constraint), each with the ground truth it
  scripted (task, later instructions, plan states, files changed, test runs); ``script`` holds
  the data types, ``repos`` the scratch repositories;
- ``runner``: runs a script through ``agent.runtime.build_session`` and records one timeline of
  requests and events;
- ``checker``: the invariants and the figures (tokens counted with a real tokenizer, ``tokens``;
  what must be pinned when, ``truth``);
- ``test_long_sessions``: each shape scaled down; ``benchmarks/long_session.py``: full size.
"""

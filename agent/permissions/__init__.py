"""Which tool calls run: the policy (``policy.decide``), allow/deny rules, session grants, and
``shell/`` (parsing command lines, and their risk)."""

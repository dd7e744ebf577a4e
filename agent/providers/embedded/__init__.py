"""The embedded offline model: SmolLM2-135M-Instruct run in-process by llama.cpp, behind a
litellm custom provider named ``embedded`` (model ``embedded/smollm2-135m``).

With no API key the app still works: the agent loop calls ``litellm.completion(model=
"embedded/smollm2-135m", messages=..., tools=..., stream=True)`` exactly as for any other model,
and this module answers it. Tool calls arrive as ``delta.tool_calls``, text as ``delta.content``.

How a reply is produced (``runtime``; ``prompt``, ``grammar`` and ``replies`` hold the prompt, grammars
and parsing):

1. the OpenAI-format conversation is rendered into a short ChatML prompt in which every reply
   is one call, ``glob(pattern="**/*.py")`` or ``answer("...")``, with a few example exchanges
   picked for the request;
2. the action is chosen by scoring each offered tool name (and ``answer``) by its
   log-probability after the prompt: deterministic, and immune to the greedy first-token trap;
3. only the arguments are generated, constrained by a GBNF grammar built from the tool's
   argument schema (names fixed, strings bounded), greedy by default and always bounded by
   ``max_tokens``; an answer is streamed as text while it is generated;
4. a tool call identical to one already made since the last user message is replaced by an
   answer, and after ``max_tool_steps`` tool rounds in one user turn only an answer is allowed,
   so the model ends its turn by itself.

litellm and llama_cpp are imported lazily (inside functions); importing this package is cheap.
"""

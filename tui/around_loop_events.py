"""How what wraps the ReAct loop looks on screen, for ``EventHandler`` (a mixin): a pipeline
hook's run and verdict as a compact ``HookBlock`` in the conversation, and the sub-agents of the
running turn in the ``SubagentTimeline`` above the prompt. Uses the handler's ``conversation``,
``end_streams`` and ``duration_format``."""

from __future__ import annotations

from typing import Any


class AroundLoopEvents:
    """The hook and sub-agent events of ``EventHandler`` (see the module docstring)."""

    _hook_blocks: dict[str, Any] | None = None

    # -- pipeline hooks --------------------------------------------------------------------------
    async def _on_hook_started(self, event: Any) -> None:
        """A pipeline hook began: a compact ``HookBlock`` ("⋯ verify · running")."""
        from .widgets.hook_block import HookBlock

        await self.end_streams()
        block = HookBlock(event.hook, event.event, event.round, duration_format=self.duration_format)
        self._running_hooks()[event.hook] = block
        await self.conversation.add(block)

    async def _on_hook_finished(self, event: Any) -> None:
        """A hook's verdict: its block shows it (a block is added when its start was not seen)."""
        from .widgets.hook_block import HookBlock

        block = self._running_hooks().pop(event.hook, None)
        if block is None:
            await self.end_streams()
            block = HookBlock(event.hook, event.event, event.round, duration_format=self.duration_format)
            await self.conversation.add(block)
        block.finish(event.verdict, event.message, event.detail, event.duration_s)

    def _running_hooks(self) -> dict[str, Any]:
        """The blocks of the hooks running now, by hook name."""
        if self._hook_blocks is None:
            self._hook_blocks = {}
        return self._hook_blocks

    # -- sub-agents (the timeline above the prompt, tui/widgets/subagent_timeline.py) -------------
    def subagent_timeline(self) -> Any:
        """The timeline of the conversation's screen (one of the screen's own children), or None
        (a screen without one). Only the screen's children are looked at: a query over the whole
        DOM grew with the conversation, and a resumed session asks once per user message."""
        from .widgets.subagent_timeline import SubagentTimeline

        try:
            found = self.conversation.screen.query_children(SubagentTimeline)
        except Exception:  # noqa: BLE001 - not mounted on a screen (yet)
            return None
        return found.first() if found else None

    async def _on_subagent_started(self, event: Any) -> None:
        timeline = self.subagent_timeline()
        if timeline is not None:
            await timeline.started(event)

    async def _on_subagent_progress(self, event: Any) -> None:
        timeline = self.subagent_timeline()
        if timeline is not None:
            timeline.progress(event)

    async def _on_subagent_finished(self, event: Any) -> None:
        timeline = self.subagent_timeline()
        if timeline is not None:
            await timeline.finished(event)

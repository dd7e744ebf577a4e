"""Full garbage collections pause while latency matters (agent.gc_pause): pauses nest (a turn may
start while litellm imports), the thresholds come back only when the last pause ends, young
survivors are frozen then, and a resume without a pause changes nothing."""

from __future__ import annotations

import gc

import pytest

from agent import gc_pause


@pytest.fixture(autouse=True)
def restored_gc():
    threshold = gc.get_threshold()
    yield
    while gc_pause.full_collections_paused():
        gc_pause.resume_full_collections(freeze=False)
    gc.set_threshold(*threshold)
    gc.unfreeze()


def test_pauses_nest_and_the_last_resume_restores_the_thresholds() -> None:
    before = gc.get_threshold()
    gc_pause.pause_full_collections()
    assert gc.get_threshold() == (before[0], before[1], gc_pause.PAUSED_THRESHOLD)
    gc_pause.pause_full_collections()  # e.g. a turn started while the import runs
    gc_pause.resume_full_collections(freeze=False)
    assert gc.get_threshold()[2] == gc_pause.PAUSED_THRESHOLD, "still paused: one pause is left"
    assert gc_pause.full_collections_paused()
    gc_pause.resume_full_collections(freeze=False)
    assert gc.get_threshold() == before
    assert not gc_pause.full_collections_paused()


def test_a_resume_without_a_pause_changes_nothing() -> None:
    before = gc.get_threshold()
    gc_pause.resume_full_collections()
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_the_last_resume_freezes_what_survived() -> None:
    gc.unfreeze()
    gc_pause.pause_full_collections()
    kept = [object() for _ in range(1000)]
    gc_pause.resume_full_collections()
    assert gc.get_freeze_count() > len(kept)

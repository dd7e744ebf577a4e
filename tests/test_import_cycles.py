"""No import circles in agent/ or tui/.

The import graph comes from grimp (installed with import-linter): every import a module runs,
function-level imports included, and ``if TYPE_CHECKING:`` imports left out (annotations only, they
never run). A circle is a strongly connected component of more than one module (Tarjan).
"""

from __future__ import annotations

import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Circles known and waiting (none): a new circle fails the test until it is broken or listed here.
KNOWN_CIRCLES: set[frozenset[str]] = set()


def import_graph(*packages: str) -> dict[str, set[str]]:
    """``{module: modules of packages it imports}``, TYPE_CHECKING imports excluded."""
    sys.path.insert(0, str(ROOT))
    try:
        graph = grimp.build_graph(*packages, exclude_type_checking_imports=True, cache_dir=None)
    finally:
        sys.path.remove(str(ROOT))
    modules = {m for m in graph.modules if m.split(".")[0] in packages}
    return {m: {x for x in graph.find_modules_directly_imported_by(m) if x in modules} for m in modules}


def circles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(edges) == [frozenset({"a", "b", "c"})]


@pytest.mark.parametrize("package", ["agent", "tui"])
def test_no_import_circles(package: str) -> None:
    found = set(circles(import_graph(package)))
    known = {c for c in KNOWN_CIRCLES if next(iter(c)).startswith(package + ".")}
    assert found == known, sorted(sorted(c) for c in found ^ known)

"""The house's rules, read from the source with ast (pure: imports nothing of ours), counting
function-local imports too: no import cycles; arrows between rooms only go down
(ARCHITECTURE.md draws them); pages never import the build engine or the store; only the CLI
imports Hydra; only the store writes DuckDB; measuring never imports presentation."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGES = ("orchestrator", "reports")
VOCABULARY = ("orchestrator.errors", "orchestrator.record", "orchestrator.where_keys",
              "orchestrator.liveness", "orchestrator.signals")
# The questions answered from the DB through the analysis core (flat: they stand alone).
QUESTIONS = ("orchestrator.gate", "orchestrator.verdicts", "orchestrator.compare_format")
# Each room and the rooms it may import (its own modules always). Top to bottom as drawn in
# ARCHITECTURE.md: a room may import only rooms below it.
MAY_IMPORT = {
    "vocabulary": set(),
    "orchestrator.analysis": {"vocabulary"},
    "orchestrator.plan": {"vocabulary", "orchestrator.analysis"},
    "orchestrator.adapters": {"vocabulary", "orchestrator.analysis"},
    "orchestrator.machine": {"vocabulary", "orchestrator.plan"},
    "orchestrator.build": {"vocabulary", "orchestrator.plan", "orchestrator.machine"},
    "orchestrator.store": {"vocabulary", "orchestrator.analysis", "orchestrator.plan",
                           "orchestrator.adapters", "orchestrator.build"},
    "orchestrator.runners": {"vocabulary", "orchestrator.analysis", "orchestrator.plan",
                             "orchestrator.adapters", "orchestrator.machine",
                             "orchestrator.build"},
    "questions": {"vocabulary", "orchestrator.analysis", "orchestrator.plan",
                  "orchestrator.store"},
    "orchestrator.history": {"vocabulary", "orchestrator.analysis", "orchestrator.plan",
                             "orchestrator.adapters", "orchestrator.store"},
    "orchestrator.run": {"vocabulary", "orchestrator.analysis", "orchestrator.plan",
                         "orchestrator.adapters", "orchestrator.machine", "orchestrator.build",
                         "orchestrator.store", "orchestrator.runners", "questions",
                         "orchestrator.history"},
    "reports.data": {"vocabulary", "orchestrator.analysis", "orchestrator.store", "questions"},
    "reports.pages": {"vocabulary", "orchestrator.analysis", "orchestrator.plan", "questions",
                      "reports.data"},
    "reports.build": {"vocabulary", "orchestrator.analysis", "orchestrator.store", "questions",
                      "reports.data", "reports.pages"},
}
MAY_IMPORT["orchestrator.cli"] = set(MAY_IMPORT) - {"orchestrator.cli"}
# Who may write the results DB through the store's writer (orchestrator/store/writer.py).
WRITERS = ("orchestrator.store", "orchestrator.run", "orchestrator.history", "orchestrator.cli")


def _module_names() -> dict[str, Path]:
    names = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _all_imports(name: str, path: Path) -> set[str]:
    """Every module `name` imports (ours and others', wherever the statement sits)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def import_graph() -> dict[str, set[str]]:
    known = _module_names()
    return {name: {m for m in _all_imports(name, path) if m in known and m != name}
            for name, path in known.items()}


def room_of(module: str) -> str:
    if module in VOCABULARY:
        return "vocabulary"
    if module in QUESTIONS:
        return "questions"
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 or module in MAY_IMPORT else module


def room_violations(graph: dict[str, set[str]]) -> list[str]:
    """Each import that crosses rooms against MAY_IMPORT (or from or into no room)."""
    found = []
    for module, imported in sorted(graph.items()):
        here = room_of(module)
        for target in sorted(imported - set(PACKAGES)):  # `from .. import x` names the package
            there = room_of(target)
            if there != here and there not in MAY_IMPORT.get(here, set()):
                found.append(f"{module} ({here}) imports {target} ({there})")
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _importers_of(prefixes: tuple[str, ...]) -> dict[str, set[str]]:
    """Module → the imported modules that start with one of `prefixes` (any package's)."""
    out = {}
    for name, path in _module_names().items():
        hits = {m for m in _all_imports(name, path)
                if any(m == p or m.startswith(p + ".") for p in prefixes)}
        if hits:
            out[name] = hits
    return out


def _in(module: str, rooms: tuple[str, ...]) -> bool:
    return any(module == r or module.startswith(r + ".") for r in rooms)


def test_the_checker_sees_a_function_local_cycle():
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_the_checker_sees_an_arrow_that_goes_up():
    graph = {"reports.pages.summary_page": {"reports.build.site", "reports.data.comparisons"},
             "orchestrator.errors": {"orchestrator.run.job"}}
    assert room_violations(graph) == [
        "orchestrator.errors (vocabulary) imports orchestrator.run.job (orchestrator.run)",
        "reports.pages.summary_page (reports.pages) imports reports.build.site (reports.build)"]


def test_no_module_imports_a_module_that_imports_it_back():
    graph = import_graph()
    assert "orchestrator.runners.loop" in graph["orchestrator.run.job"]
    assert "orchestrator.adapters.registry" in graph["orchestrator.history.importer"]
    assert cycles(graph) == []


def test_every_module_lives_in_a_room_and_arrows_only_go_down():
    graph = import_graph()
    homeless = sorted(m for m in graph if room_of(m) not in MAY_IMPORT
                      and m not in PACKAGES)
    assert homeless == [], "put each in a room (and in ARCHITECTURE.md)"
    assert room_violations(graph) == []


def test_pages_never_import_the_build_engine_the_store_or_duckdb():
    touching = {m: sorted(hits) for m, hits in _importers_of(
        ("reports.build", "orchestrator.store", "duckdb")).items()
        if m.startswith("reports.pages")}
    assert "reports.build.site" in _importers_of(("reports.pages",))  # the checker reads them
    assert touching == {}


@pytest.mark.parametrize("library, allowed", [
    ("hydra", ("orchestrator.cli",)),
    # MISSING marks a required field of the schemas Hydra composes onto (structured configs).
    ("omegaconf", ("orchestrator.cli", "orchestrator.plan.schema")),
])
def test_only_the_cli_imports_hydra(library, allowed):
    users = _importers_of((library,))
    assert any(m.startswith("orchestrator.cli") for m in users)
    assert sorted(m for m in users if not _in(m, allowed)) == []


def test_measuring_never_imports_presentation_and_nothing_imports_the_cli():
    into_reports = _importers_of(("reports",))
    assert sorted(m for m in into_reports
                  if m.startswith("orchestrator") and not m.startswith("orchestrator.cli")) == []
    assert sorted(m for m in _importers_of(("orchestrator.cli",))
                  if not m.startswith("orchestrator.cli")) == []


def test_only_the_store_writes_duckdb():
    """duckdb.connect only in the store; the store's `connect` elsewhere read-only; its writer
    only where runs are made (run, history) and in the CLI."""
    opened, writable = [], []
    for name, path in _module_names().items():
        if name.startswith("orchestrator.store"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if isinstance(func, ast.Attribute) and called == "connect" \
                    and getattr(func.value, "id", "") == "duckdb":
                opened.append(f"{name}:{node.lineno}")
            elif called == "connect" and not any(
                    k.arg == "read_only" and getattr(k.value, "value", None) is True
                    for k in node.keywords):
                writable.append(f"{name}:{node.lineno}")
    assert opened == []
    assert writable == []
    writers = _importers_of(("orchestrator.store.writer",))
    store_users = {m for m, hits in _importers_of(("orchestrator.store",)).items()
                   if any(h in ("orchestrator.store.Store", "orchestrator.store.writer")
                          for h in hits)}
    assert store_users, "the checker sees the writer's users"
    assert sorted(m for m in set(writers) | store_users if not _in(m, WRITERS)) == []

"""Shared fixtures: real captured engine outputs, and the real Hydra configs."""
from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[1]
# Held shared by every test, exclusively by a machine_wide one: tests in parallel workers (and
# other test sessions on this machine) share its cpusets, containers and leftovers.
MACHINE_LOCK = Path(tempfile.gettempdir()) / "tidemark-tests-machine.lock"


@contextlib.contextmanager
def _machine_lock(exclusive: bool) -> Iterator[None]:
    # Opened to read, and created only when missing: a lock needs no more, and another user
    # (or /tmp's protected_regular) then never stops the tests of whoever made it second.
    try:
        fd = os.open(MACHINE_LOCK, os.O_RDONLY)
    except FileNotFoundError:
        fd = os.open(MACHINE_LOCK, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # and with it the lock


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """A machine_wide test (it applies a shield, of which the machine holds one, watches a
    leftover that any Tidemark command removes, or makes its change with load it starts) runs
    while no other test does. Around the whole protocol, so a module fixture set up or torn
    down with a test is inside it too."""
    with _machine_lock(item.get_closest_marker("machine_wide") is not None):
        return (yield)


@pytest.fixture(scope="session", autouse=True)
def _children_see_no_test_worker() -> None:
    """pytest-xdist's worker sets PYTEST_XDIST_* in the environment every child inherits, and a
    user's pytest-benchmark suite a test runs then takes itself for a worker and writes no
    JSON: the children of a test see the environment a user's shell has."""
    for name in [n for n in os.environ if n.startswith("PYTEST_XDIST_")]:
        del os.environ[name]


def read_data(relative: str) -> str:
    return (DATA / relative).read_text()


def mutation(path: tuple, value: object):
    """A change to a parsed JSON document: the value at `path` (keys and list indexes) set, or
    deleted when `value` is `...`; for the adapters' wrong-shape tests."""
    def apply(doc):
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if value is ...:
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
        return doc
    return apply


@pytest.fixture(scope="session")
def compose_conf():
    """compose_conf([...overrides]) → the validated TidemarkConf dataclass, as `tidemark run` sees it."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    from orchestrator.cli.compose import register_schemas

    register_schemas()
    GlobalHydra.instance().clear()

    def _compose(overrides: list[str] | None = None):
        with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
            return OmegaConf.to_object(compose("tidemark", overrides=overrides or []))

    return _compose

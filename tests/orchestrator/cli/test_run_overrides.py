"""Which overrides a run is composed from and keeps, and when `tidemark run` composes its config
once instead of going through Hydra's app (orchestrator/cli/run.py, compose.py)."""
from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from orchestrator.cli.compose import is_hydra_option, validate_overrides
from orchestrator.cli.run import _kept_overrides


@pytest.mark.parametrize("override, hydras", [
    ("hydra.verbose=true", True), ("+hydra.job.env_set.FOO=1", True),
    ("++hydra.job.name=x", True), ("~hydra.sweep", True), ("hydra/launcher=submitit_slurm", True),
    ("hydra.searchpath=[file:///tmp/conf]", False), ("+hydra.searchpath=[file:///c]", False),
    ("engine=leveldb", False), ("+engine.extra=1", False), ("hydrant=1", False)])
def test_hydras_own_options_are_told_from_the_configs_overrides(override, hydras):
    assert is_hydra_option(override) is hydras


def test_a_run_keeps_its_configs_overrides_then_its_searchpath_and_no_hydra_option():
    given = ["hydra.searchpath=[file:///tmp/conf]", "engine=leveldb", "+hydra.job.env_set.A=1",
             "hydra/launcher=basic", "threads=2"]
    assert _kept_overrides(given) == ["engine=leveldb", "threads=2",
                                      "hydra.searchpath=[file:///tmp/conf]"]


def test_one_run_gets_its_config_composed_once_a_sweep_or_hydra_option_gets_none():
    cfg = validate_overrides(["engine=leveldb", "workload=readrandom", "threads=2"])
    assert cfg is not None and OmegaConf.to_object(cfg).threads == 2
    assert validate_overrides(["engine=leveldb", "threads=1,2"]) is None  # a sweep: one per value
    assert validate_overrides(["engine=leveldb", "+hydra.job.env_set.A=1"]) is None

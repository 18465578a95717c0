"""A bad override is one line naming the value and the fix, before anything is built or run."""
import pytest

from orchestrator.cli.compose import validate_overrides
from orchestrator.errors import ConfigError


def test_an_unknown_option_of_a_group_names_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match="unknown engine 'nope'; valid engines: .*leveldb"):
        validate_overrides(["engine=nope"])


def test_a_key_inside_a_group_nothing_selects_says_to_choose_one_first() -> None:
    """No default workload: OmegaConf asserted (a traceback) on a path through its null."""
    with pytest.raises(ConfigError) as caught:
        validate_overrides(["workload.params.num=5"])
    said = str(caught.value)
    assert "cannot set 'workload.params.num'" in said and "workload=NAME" in said
    assert "readrandom" in said and "\n" not in said
    validate_overrides(["workload=readrandom", "workload.params.num=5"])  # chosen: fine

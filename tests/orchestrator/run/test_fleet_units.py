"""What a fleet job asks Slurm for (pure): the profile as the constraint, and a time limit that
always bounds the job (Slurm reads 0 as no limit, and a negative number wraps to years)."""
import pytest

from orchestrator.errors import ConfigError
from orchestrator.run.fleet import placement

JOB = ["machine=fleet-a", "engine=leveldb", "workload=readrandom", "repetitions=2", "timeout_s=60"]


def test_the_time_limit_comes_from_the_plan_unless_given(compose_conf):
    conf = compose_conf(JOB)
    # readrandom at one point: setup, warm-up, 2 measured = 4 processes at 60 s, + 30 min build.
    assert placement(conf, 30) == placement(conf, 30, None)
    assert placement(conf, 30).constraint == "fleet-a"
    assert placement(conf, 30).time_limit_min == 30 + 4
    assert placement(conf, 30, 7).time_limit_min == 7


@pytest.mark.parametrize("allowance, limit, bad", [
    (30, 0, "hydra.launcher.time_limit_min=0"),
    (30, -5, "hydra.launcher.time_limit_min=-5"),
    (-1, None, "hydra.launcher.build_allowance_min=-1"),
])
def test_a_time_limit_that_would_not_bound_the_job_is_refused(compose_conf, allowance, limit, bad):
    with pytest.raises(ConfigError) as err:
        placement(compose_conf(JOB), allowance, limit)
    assert str(err.value).startswith(bad) and "\n" not in str(err.value)

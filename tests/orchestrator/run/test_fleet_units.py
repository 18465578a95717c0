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


# sinfo -h -N -o '%N|%T|%f' as Slurm 22.05 prints it, fleet-a's slurmd killed (SlurmdTimeout).
SINFO_A_DOWN = "fleet-a|down*|fleet-a\nfleet-b|idle|fleet-b\n"
SINFO_A_NOT_RESPONDING = "fleet-a|allocated*|fleet-a\nfleet-b|idle|fleet-b\n"


def _job(constraint: str, state: str, node: str = ""):
    from orchestrator.run.fleet import FleetJob, Placement

    return FleetJob(1, [f"machine={constraint}"], None, Placement(constraint, 5), state=state,
                    node=node)


@pytest.mark.parametrize("sinfo, constraint, state, node, lost", [
    # requeued after its node went down: Slurm's own verdict (down), not a late answer (*)
    (SINFO_A_DOWN, "fleet-a", "PENDING", "fleet-a", "its node went down while it ran (fleet-a down*)"),
    (SINFO_A_DOWN, "fleet-a", "PENDING", "", "not run: no node of profile fleet-a is up "
                                              "(fleet-a down*, fleet-b idle)"),
    (SINFO_A_NOT_RESPONDING, "fleet-a", "PENDING", "fleet-a", ""),
    ("fleet-a|unknown*|fleet-a\n", "fleet-a", "PENDING", "", ""),  # not registered yet
    ("fleet-a|idle~|fleet-a\n", "fleet-a", "PENDING", "", ""),  # powered down: it boots
    ("fleet-a|drained|fleet-a\n", "fleet-a", "PENDING", "", "not run: no node of profile "
                                                            "fleet-a is up (fleet-a drained)"),
    (SINFO_A_DOWN, "fleet-a", "RUNNING", "fleet-a", ""),  # Slurm has not ended it yet
    (SINFO_A_DOWN, "fleet-b", "PENDING", "", ""),
])
def test_a_waiting_job_is_lost_only_when_no_node_of_its_profile_is_up(sinfo, constraint, state,
                                                                      node, lost):
    from orchestrator.run.fleet import serving_nodes

    job = _job(constraint, state, node)
    assert job.stranded(serving_nodes(lambda: sinfo)) == bool(lost)
    assert job.lost == lost

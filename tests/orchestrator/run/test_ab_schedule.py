"""The order of an A/B job (pure): duet rounds run together on swapped CPUs, the interleaved
order is the seeded one it always was, and designs a plan cannot honour are refused first."""
import pytest

from orchestrator.run.ab import AbOptions, check_design
from orchestrator.run.ab_schedule import flatten, schedule, schedule_blocks
from orchestrator.errors import ConfigError
from orchestrator.plan.runplan import make_plan

LEVELDB = ["engine=leveldb", "workload=readrandom", "repetitions=4"]


def test_duet_rounds_run_both_sides_together_on_swapped_cpus(compose_conf):
    plan = make_plan(compose_conf(LEVELDB))
    (block,) = schedule_blocks(plan, plan, seed=3, design="duet", duet_cpus=(0, 1))
    assert [side for side, _ in block.prepare] == ["a", "a", "b", "b"]  # setup, warm pass
    cpus = [{"a": 0, "b": 1}, {"a": 1, "b": 0}] * 2  # swapped every round
    assert [r.record() for r in block.rounds] == [
        {"point": 1, "rep": rep, "order": "ab", "together": True, "cpus": c}
        for rep, c in zip((1, 2, 3, 4), cpus)]
    assert all(a.repetition == b.repetition for r in block.rounds for (_, a), (_, b) in
               [r.steps])


def test_the_interleaved_blocks_flatten_to_the_seeded_order(compose_conf):
    plan = make_plan(compose_conf(LEVELDB))
    blocks = schedule_blocks(plan, plan, seed=7)
    assert flatten(blocks) == schedule(plan, plan, seed=7)
    assert not any(r.together for b in blocks for r in b.rounds)


@pytest.mark.parametrize("overrides,options,message", [
    (["cache=cold"], AbOptions(design="duet"), "drops every page cache"),
    ([], AbOptions(adaptive=True, max_rounds=10), "plans its own number of repetitions"),
])
def test_designs_a_plan_cannot_honour_are_refused(compose_conf, overrides, options, message):
    conf = compose_conf([*LEVELDB, *overrides])
    plan = make_plan(conf)
    blocks = schedule_blocks(plan, plan, 1, options.design, (0, 1))
    with pytest.raises(ConfigError, match=message):
        check_design(conf, plan, blocks, options)

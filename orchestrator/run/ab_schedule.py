"""The order of a `tidemark ab` job (pure): per point, both sides' preparation, then rounds.

A round is one measured repetition of each side. In the interleaved and unpaired designs a
round runs A and B back to back in a seeded random order; in the duet design both run at the
same time, each pinned to its own CPU, the CPUs swapped every round (so neither side keeps the
CPU that happens to take the host's interrupts). Which design analyses how: analysis.paired.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Sequence

from ..analysis.paired import DUET
from ..errors import ConfigError
from ..plan.runplan import PHASE_CALLGRIND, PHASE_MEASURED, PHASE_SETUP, PHASE_WARMUP, RunPlan, Step

PREPARING = (PHASE_SETUP, PHASE_WARMUP)  # run for both sides before a point's measured rounds
SideStep = tuple[str, Step]  # ("a" | "b", step)


@dataclass(frozen=True)
class Round:
    point: int
    rep: int
    steps: tuple[SideStep, ...]  # in the order they run (or start, together)
    together: bool = False  # duet: the steps run at the same time
    cpus: tuple[tuple[str, int], ...] = ()  # duet: (side, CPU) each step is pinned to

    def record(self) -> dict[str, Any]:
        """As stored in ab_pairs.schedule, e.g. {"point": 1, "rep": 2, "order": "ba"}."""
        out: dict[str, Any] = {"point": self.point, "rep": self.rep,
                               "order": "".join(side for side, _ in self.steps)}
        if self.together:
            out.update(together=True, cpus=dict(self.cpus))
        return out


@dataclass(frozen=True)
class Block:
    """One parameter point: its preparation, its rounds, then anything else (callgrind)."""

    point: int
    prepare: tuple[SideStep, ...]
    rounds: tuple[Round, ...]
    after: tuple[SideStep, ...]


def check_same_shape(plan_a: RunPlan, plan_b: RunPlan) -> None:
    """Both sides must run the same workloads and repetitions, or rounds cannot pair up."""
    shape = lambda plan: [(s.point, s.workload, s.phase, s.repetition) for s in plan.steps]
    if shape(plan_a) != shape(plan_b):
        raise ConfigError("the two sides plan different steps; give workload, suite and "
                          "repetitions after '--' so both sides share them")
    if plan_a.engine != plan_b.engine:
        raise ConfigError(f"side a runs {plan_a.engine} and side b {plan_b.engine}; ab compares "
                          f"two builds of one engine")


def _round(rng: random.Random, step_a: Step, step_b: Step, design: str,
           duet_cpus: Sequence[int]) -> Round:
    pair = [("a", step_a), ("b", step_b)]
    if design != DUET:
        rng.shuffle(pair)
        return Round(step_a.point, step_a.repetition, tuple(pair))
    first, second = duet_cpus[0], duet_cpus[1]
    if step_a.repetition % 2 == 0:  # swap every round
        first, second = second, first
    return Round(step_a.point, step_a.repetition, tuple(pair), True, (("a", first), ("b", second)))


def schedule_blocks(plan_a: RunPlan, plan_b: RunPlan, seed: int, design: str = "interleaved",
                    duet_cpus: Sequence[int] = ()) -> list[Block]:
    """Every point's block, in point order; rounds in a seeded random order (or duet)."""
    check_same_shape(plan_a, plan_b)
    rng = random.Random(seed)
    blocks = []
    for point in sorted({s.point for s in plan_a.steps}):
        a = [s for s in plan_a.steps if s.point == point]
        b = [s for s in plan_b.steps if s.point == point]
        prepare = [("a", s) for s in a if s.phase in PREPARING] + \
            [("b", s) for s in b if s.phase in PREPARING]
        measured = zip([s for s in a if s.phase == PHASE_MEASURED],
                       [s for s in b if s.phase == PHASE_MEASURED])
        rounds = tuple(_round(rng, sa, sb, design, duet_cpus) for sa, sb in measured)
        # Instruction counts (callgrind) in rounds too, A and B in a seeded random order.
        counted = [step for sa, sb in zip([s for s in a if s.phase == PHASE_CALLGRIND],
                                          [s for s in b if s.phase == PHASE_CALLGRIND])
                   for step in rng.sample([("a", sa), ("b", sb)], 2)]
        done = {id(s) for _, s in prepare} | {id(s) for r in rounds for _, s in r.steps} | \
            {id(s) for _, s in counted}
        after = counted + [("a", s) for s in a if id(s) not in done] + \
            [("b", s) for s in b if id(s) not in done]
        blocks.append(Block(point, tuple(prepare), rounds, tuple(after)))
    return blocks


def flatten(blocks: Sequence[Block]) -> list[SideStep]:
    return [item for block in blocks for item in
            (*block.prepare, *(s for r in block.rounds for s in r.steps), *block.after)]


def schedule(plan_a: RunPlan, plan_b: RunPlan, seed: int) -> list[SideStep]:
    """The interleaved order (pure): per point, both sides' setups and warm-ups, then each round
    of measured repetitions in a seeded random order, then the callgrind repetitions in rounds
    alike, then anything else."""
    return flatten(schedule_blocks(plan_a, plan_b, seed))


def rounds_record(order: list[SideStep]) -> list[dict[str, Any]]:
    """The measured order as stored: one entry per round, e.g. {"point": 1, "rep": 2, "order": "ba"}."""
    rounds: dict[tuple[int, int], str] = {}
    for side, step in order:
        if step.phase == PHASE_MEASURED:
            rounds[(step.point, step.repetition)] = rounds.get((step.point, step.repetition), "") + side
    return [{"point": p, "rep": r, "order": o} for (p, r), o in rounds.items()]

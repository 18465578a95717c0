"""The change-point detector equals a straightforward E-Divisive, bit for bit (pure).

The reference below is the detector written the plain way: every distance by broadcast
subtraction, every shuffle judged one at a time, no early exit written with arrays. Its one
rule shared with the detector's C step (_edivisive.c) is the order in which each point's
distances to the points before it are added, which fixes the bits: four running sums, by the
other point's position modulo 4, over whole blocks of four, the rest added to the first, joined
as (s0 + s1) + (s2 + s3). The fast path must give the same steps and the same p-values on data
with planted steps, on flat noise and on data full of ties (equal values make equal splits,
where `>=` decides a hit).
"""
import numpy as np
import pytest

from orchestrator.analysis.changepoints import CHUNK, _Segment, detect_change_points


def _added_in_order(values: np.ndarray, start: float = 0.0) -> float:
    """start + values[0] + values[1] + ..., left to right (cumsum adds one at a time)."""
    return float(np.cumsum(np.r_[start, values])[-1])


def _distances_to_earlier(x: np.ndarray) -> np.ndarray:
    """Σ_{j<i} |x_i - x_j| for each i, added in the detector's order."""
    earlier = np.empty(x.size)
    for i in range(x.size):
        distances, whole = np.abs(x[i] - x[:i]), i // 4 * 4
        sums = [_added_in_order(distances[k:whole:4]) for k in range(4)]
        sums[0] = _added_in_order(distances[whole:], sums[0])
        earlier[i] = (sums[0] + sums[1]) + (sums[2] + sums[3])
    return earlier


def _reference_q(x: np.ndarray, order: np.ndarray, min_size: int) -> np.ndarray:
    """Q(τ) of one ordering, as E-Divisive defines it."""
    n = x.size
    within = np.zeros(n + 1)
    np.cumsum(_distances_to_earlier(x[order]), out=within[1:])
    within *= 2.0
    prefix = np.zeros(n + 1)
    np.cumsum(np.abs(x[:, None] - x[None, :]).sum(axis=1)[order], out=prefix[1:])
    q = np.full(n, -np.inf)
    for tau in range(min_size, n - min_size + 1):
        m, k = float(tau), float(n - tau)
        between = prefix[tau] - within[tau]
        right = (prefix[n] - 2.0 * prefix[tau] + within[tau]) / max(k * (k - 1), 1.0)
        q[tau] = m * k / n * (between * 2.0 / (m * k) - within[tau] / max(m * (m - 1), 1.0)
                              - right)
    return q


def _reference_p(x: np.ndarray, observed: float, rng: np.random.Generator,
                 permutations: int, min_size: int) -> float:
    hits, done, give_up = 0, 0, int(0.05 * (permutations + 1))
    while done < permutations:  # shuffles drawn in the detector's batches: the same ones
        batch = min(CHUNK, permutations - done)
        for order in rng.permuted(np.tile(np.arange(x.size), (batch, 1)), axis=1):
            done += 1
            if _reference_q(x, order, min_size).max() >= observed:
                hits += 1
                if hits > give_up:
                    return (hits + 1) / (done + 1)
    return (hits + 1) / (permutations + 1)


def _reference_detect(values: np.ndarray, alpha: float = 0.05, min_size: int = 3,
                      permutations: int = 199, seed: int = 1234) -> list[tuple[int, float]]:
    rng, bounds, found = np.random.default_rng(seed), [0, values.size], {}
    while True:
        best = None
        for start, end in zip(bounds[:-1], bounds[1:]):
            if end - start >= 2 * min_size:
                q = _reference_q(values[start:end], np.arange(end - start), min_size)
                tau = int(np.argmax(q))
                if np.isfinite(q[tau]) and (best is None or q[tau] > best[0]):
                    best = (q[tau], tau, start, end)
        if best is None:
            break
        q, tau, start, end = best
        p = _reference_p(values[start:end], q, rng, permutations, min_size)
        if p >= alpha:
            break
        found[start + tau] = p
        bounds = sorted(bounds + [start + tau])
    return sorted(found.items())


def _series(seed: int, kind: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 90))
    x = rng.normal(5e4, 800, n)
    if kind == "steps":
        for cut in rng.integers(0, n, 2):
            x[cut:] += rng.choice([-1, 1]) * rng.uniform(500, 4000)
    elif kind == "ties":  # short, two or three distinct values, stepped: shuffles tie the split
        n = int(rng.integers(6, 16))
        x = np.where(np.arange(n) >= n // 2, 1002.0, 1000.0)
        x[rng.integers(0, n, 2)] = 1001.0
    return x


@pytest.mark.parametrize("kind", ["steps", "flat", "ties"])
@pytest.mark.parametrize("seed", range(8))
def test_detector_equals_the_straightforward_reference(kind, seed):
    x = _series(seed, kind)
    assert [(p.index, p.p_value) for p in detect_change_points(x)] == _reference_detect(x)


def test_split_statistics_equal_the_reference_bit_for_bit_with_ties():
    rng = np.random.default_rng(5)
    x = np.r_[rng.choice([7.0, 8.0, 9.5], 40), rng.normal(12, 0.5, 30).round(1)]
    orders = np.stack([np.arange(x.size), *(rng.permutation(x.size) for _ in range(CHUNK + 3))])
    q = _Segment(x, 3).split_statistics(orders)
    for row, order in zip(q, orders):
        assert row.tobytes() == _reference_q(x, order, 3).tobytes()


@pytest.mark.parametrize("kind", ["flat", "ties"])
def test_p_values_equal_the_reference_where_the_test_gives_up_early(kind):
    """Not significant: the p-value where the shuffles stopped is not shown, but must agree."""
    for seed in range(4):
        x = _series(seed, kind)
        segment = _Segment(x, 3)
        _, q = segment.best_split()
        fast = segment.significance(q, np.random.default_rng(seed), 199)
        assert fast == _reference_p(x, q, np.random.default_rng(seed), 199, 3)


def test_the_c_step_refuses_buffers_that_disagree_in_size():
    from orchestrator.analysis._edivisive import split_statistics

    values = np.zeros((2, 10))
    with pytest.raises(ValueError, match="disagree in size"):
        split_statistics(values, np.zeros((2, 9)), 10, 3, 7, np.empty((2, 5)))
    with pytest.raises(ValueError, match="disagree in size"):
        split_statistics(values, np.zeros((2, 10)), 10, 3, 7, np.empty((2, 4)))
    with pytest.raises(ValueError, match="bad shape"):
        split_statistics(values, np.zeros((2, 10)), 10, 3, 10, np.empty((2, 8)))
    with pytest.raises(ValueError, match="bad shape"):  # n * 8 bytes would overflow
        split_statistics(values, np.zeros((2, 10)), 2**61, 3, 7, np.empty((2, 5)))
    with pytest.raises(TypeError, match="values must hold float64"):
        split_statistics(np.zeros((2, 10), dtype=np.int64), np.zeros((2, 10)), 10, 3, 7,
                         np.empty((2, 5)))
    with pytest.raises(TypeError, match="out must hold float64"):
        split_statistics(values, np.zeros((2, 10)), 10, 3, 7, np.empty((2, 5), np.float32))


def test_the_c_step_leaves_subnormal_floats_alone():
    """Linked with -ffast-math, a library flushes subnormals to zero in the whole process: the
    build passes -fno-fast-math last (pyproject.toml) and the module refuses to load so."""
    import orchestrator.analysis._edivisive  # noqa: F401

    assert (np.array([1e-310]) * 1.0)[0] != 0.0


@pytest.mark.parametrize("n", [6, 7, 31, 200])
def test_the_c_step_draws_numpys_own_shuffles(n):
    """shuffled_maxima draws what Generator.permuted draws (the same orders, and the generator
    left in the same state, which the next test's shuffles start from) and keeps the best Q of
    each, NaN where one is."""
    from orchestrator.analysis._edivisive import shuffled_maxima

    x = np.random.default_rng(n).normal(100, 5, n)
    x[n // 2] = np.nan if n == 31 else x[n // 2]
    segment = _Segment(x, 3)
    ours, theirs = np.random.default_rng(7), np.random.default_rng(7)
    for batch in (CHUNK, 3):
        maxima = np.empty(batch)
        shuffled_maxima(segment.x, segment.row_sums, int(segment.taus[0]),
                        int(segment.taus[-1]), ours.bit_generator.capsule, maxima)
        orders = theirs.permuted(np.tile(np.arange(n), (batch, 1)), axis=1)
        expected = segment.split_statistics(orders).max(axis=1)
        assert maxima.tobytes() == expected.tobytes()
    assert ours.bit_generator.state == theirs.bit_generator.state


def test_the_shuffles_step_refuses_what_it_cannot_score():
    from orchestrator.analysis._edivisive import shuffled_maxima

    capsule = np.random.default_rng(1).bit_generator.capsule
    with pytest.raises(ValueError, match="bad shape"):
        shuffled_maxima(np.zeros(10), np.zeros(9), 3, 7, capsule, np.empty(2))
    with pytest.raises(ValueError, match="bad shape"):
        shuffled_maxima(np.zeros(10), np.zeros(10), 3, 10, capsule, np.empty(2))
    with pytest.raises(ValueError):  # not a bit generator's capsule
        shuffled_maxima(np.zeros(10), np.zeros(10), 3, 7, object(), np.empty(2))
    with pytest.raises(TypeError, match="out must hold float64"):
        shuffled_maxima(np.zeros(10), np.zeros(10), 3, 7, capsule, np.empty(2, np.float32))


def test_a_column_of_a_table_is_searched_as_its_copy():
    """Values that are not one block of memory (a column of a 2-D array) give the steps of
    their contiguous copy (the C step reads one buffer)."""
    table = np.stack([_series(3, "steps"), np.zeros(_series(3, "steps").size)], axis=1)
    column = table[:, 0]
    assert not column.flags.c_contiguous
    found = [(p.index, p.p_value) for p in detect_change_points(column)]
    assert found == [(p.index, p.p_value) for p in detect_change_points(column.copy())]
    assert found  # a planted step, found

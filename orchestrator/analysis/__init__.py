"""The analysis core (pure): every verdict Tidemark gives is decided here, once.

- `identity`: what makes two measurements one series, and what may differ but is named;
- `pairing`: which series of two runs are compared, and when a comparison is refused;
- `noise`: a series' noise between runs (history medians and A/A pairs) and the tail of its
  run-to-run changes;
- `stats`: the tests (Mann–Whitney U, bootstrap CI of the ratio of medians) and thresholds;
- `paired`: A/B designs, and paired jobs judged on per-round ratios (Wilcoxon signed-rank);
- `sequential`: the adaptive A/B stopping rule (when another round is needed);
- `deterministic`: which metrics are deterministic (instruction counts) and their verdict rule
  (threshold and observed spread, no U test);
- `compare`: two runs series by series → a Report, each metric by its rule;
- `decide`: the gate's pass / regression / cannot tell, with reasons;
- `partner`: which run a run is compared with;
- `targets`: declared targets and bars, judged series by series;
- `changepoints`: steps in a series' history (E-Divisive).

`orchestrator.verdicts` feeds it from the store for the CLI and the site; they only render.
"""

#!/usr/bin/env bash
# The nightly flow (.github/workflows/nightly.yml runs this; `make test` runs it on a LevelDB
# git history so it cannot rot): run the head commit, gate it against the last nightly with its
# flagged and unresolved series confirmed by paired re-measurement, bisect a confirmed
# regression between the two nights' commits, publish the site, and write the verdict to the job
# summary.
#
#   scripts/nightly.sh --out DIR [--db DB] [--label L] [--bundle-dir DIR] [--metrics "M ..."] \
#     -- RUN_OVERRIDES...
#
# --metrics: what the gate judges (default: `metrics` of the gate config). With callgrind=true
# among the overrides, "ops_per_sec instructions_per_op" also gates instruction counts, which
# the machine's noise cannot move: on a noisy day the paired ops/s job cannot tell a 5 %
# regression, the instruction counts confirm it (benchmarks/catch_study.py).
#
# DB (default DIR/tidemark.duckdb) holds the history; with --bundle-dir the run is written as a
# bundle there and merged into DB (the workflow keeps the bundles on its data branch). Writes
# DIR/verdict.md (appended to $GITHUB_STEP_SUMMARY when set) and DIR/site/, and exits with the
# confirmed verdict: 0 pass, 1 a confirmed regression, 2 cannot tell (the first night, a run
# that did not finish, a flag that could not be confirmed) — never a pass it could not check.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
TIDEMARK=${TIDEMARK:-$HERE/.venv/bin/tidemark}
OUT="" DB="" LABEL=nightly BUNDLES="" RUN=() METRICS=()

usage() {
  echo "usage: $0 --out DIR [--db DB] [--label L] [--bundle-dir DIR] [--metrics \"M ...\"]" \
    "-- RUN_OVERRIDES..." >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --out|--db|--label|--bundle-dir|--metrics) [ $# -ge 2 ] || usage ;;&
    --out) OUT=$2; shift 2 ;;
    --db) DB=$2; shift 2 ;;
    --label) LABEL=$2; shift 2 ;;
    --bundle-dir) BUNDLES=$2; shift 2 ;;
    --metrics) read -r -a names <<< "$2"; for m in "${names[@]}"; do METRICS+=(--metric "$m"); done
      shift 2 ;;
    --) shift; RUN=("$@"); break ;;
    *) usage ;;
  esac
done
[ -n "$OUT" ] || usage
mkdir -p "$OUT" || { echo "nightly: cannot create --out $OUT; pass a writable folder" >&2; exit 2; }
OUT=$(cd "$OUT" && pwd)
DB=${DB:-$OUT/tidemark.duckdb}
WHERE=("db=$DB" "results_dir=$OUT" "data_dir=$OUT/data")
rm -f "$OUT/verdict.md"

# A partial run still stored what it measured: the gate says what it can tell of it. Tonight's
# run is gated by the id it printed: a run that ended without one must not gate an older night's.
ran=0
if [ -n "$BUNDLES" ]; then
  "$TIDEMARK" run "${RUN[@]}" "label=$LABEL" "bundle_dir=$BUNDLES" "${WHERE[@]}" \
    | tee "$OUT/run.log" || ran=$?
  "$TIDEMARK" ingest "$BUNDLES" --db "$DB" || ran=$?
else
  "$TIDEMARK" run "${RUN[@]}" "label=$LABEL" "${WHERE[@]}" | tee "$OUT/run.log" || ran=$?
fi
TONIGHT=$(sed -n 's/^run \([^ :]*\): .*/\1/p' "$OUT/run.log" | tail -n 1)

code=0
if [ -z "$TONIGHT" ]; then
  printf '### ⚠️ tidemark gate: cannot tell\n\n- %s (it exited %s); see its output\n' \
    "tonight's run ended without naming its run" "$ran" > "$OUT/verdict.md"
  code=2
else
  # --confirm re-measures, paired, every flagged regression and every series the two runs could
  # not resolve at min_effect (benchmarks/catch_study.py: 60 rounds), within 30 minutes.
  "$TIDEMARK" gate --db "$DB" --baseline "label=$LABEL~1" --candidate "$TONIGHT" --confirm \
    --confirm-rounds 60 --confirm-minutes 30 "${METRICS[@]}" --summary "$OUT/verdict.md" \
    2> "$OUT/gate.err" | tee "$OUT/gate.out" || code=$?
  cat "$OUT/gate.err" >&2
fi
if [ ! -f "$OUT/verdict.md" ]; then  # e.g. the first night: nothing to gate against yet
  printf '### ⚠️ tidemark gate: cannot tell\n\n- %s\n' \
    "$(grep -v '^\s*$' "$OUT/gate.err" | tail -n 1)" > "$OUT/verdict.md"
  code=2
fi
if [ "$ran" -ne 0 ] && [ "$code" -eq 0 ]; then
  code=2  # never a pass over a run that did not finish
  printf '\n- the run exited %s: not every series was measured\n' "$ran" >> "$OUT/verdict.md"
fi

# A confirmed regression between two commits: which commit made it. Both commits come from
# their runs' builds; an engine without commits (a Debian source) cannot be bisected.
if [ "$code" -eq 1 ]; then
  bisected=0 SAME=()
  for override in "${RUN[@]}"; do  # the bisect sets the rounds and labels of its own jobs
    case $override in repetitions=*|label=*|engine.source.ref=*) ;; *) SAME+=("$override") ;; esac
  done
  # Bisected on the metric whose regression was confirmed (e.g. instruction counts, when the
  # noisy ops/s could not tell), else the workload's own.
  line='^confirm: .* \([A-Za-z0-9_]*\): \(flagged \)\{0,1\}between runs .*confirmed slower.*'
  confirmed=$(sed -n "s/$line/\\1/p" "$OUT/gate.out" | head -n 1)
  "$TIDEMARK" bisect --good "run=label=$LABEL~1" --bad "run=$TONIGHT" \
    ${confirmed:+--metric "$confirmed"} -- "${SAME[@]}" \
    "${WHERE[@]}" > "$OUT/bisect.txt" 2>&1 || bisected=$?
  cat "$OUT/bisect.txt"
  printf '\n#### Bisect\n\n- %s\n' "$(grep -E '^bisect: |^error|^tidemark' "$OUT/bisect.txt" \
    | tail -n 1 || echo "tidemark bisect exited $bisected")" >> "$OUT/verdict.md"
fi

# The site is the artifact (DIR/site/); if it cannot be built, the verdict still stands.
"$TIDEMARK" site --db "$DB" --out "$OUT" > "$OUT/site.log" 2>&1 \
  || echo "nightly: the site could not be built; see $OUT/site.log" >&2
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$OUT/verdict.md" >> "$GITHUB_STEP_SUMMARY"
fi
exit "$code"

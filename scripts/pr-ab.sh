#!/usr/bin/env bash
# The pull-request gate (.github/workflows/pr.yml runs this; `make test` runs it on two LevelDB
# builds so it cannot rot): `tidemark ab` with side A = the PR's base and side B = its head in
# one job, then `tidemark gate` head against base through the same analysis core.
#
#   scripts/pr-ab.sh --out DIR [--metric M]... [--a OVERRIDE]... [--b OVERRIDE]... [-- COMMON...]
#
# Writes DIR/tidemark.duckdb, the Markdown verdict DIR/verdict.md (appended to
# $GITHUB_STEP_SUMMARY when set: the job summary), the site DIR/site/ (the artifact), and exits
# with the gate's code: 0 pass, 1 a regression, 2 cannot tell (never a pass it could not check).
# Anything that stops the measurement (a usage error, a side that does not build, a crash) is 2
# with a verdict saying why, never 1: the workflow reads 1 as a regression.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
TIDEMARK=${TIDEMARK:-$HERE/.venv/bin/tidemark}
OUT="" A=() B=() METRICS=() COMMON=()

usage() {
  echo "usage: $0 --out DIR [--metric M]... [--a OVERRIDE]... [--b OVERRIDE]... [-- COMMON...]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --out|--metric|--a|--b) [ $# -ge 2 ] || usage ;;&
    --out) OUT=$2; shift 2 ;;
    --metric) METRICS+=(--metric "$2"); shift 2 ;;
    --a) A+=(--a "$2"); shift 2 ;;
    --b) B+=(--b "$2"); shift 2 ;;
    --) shift; COMMON=("$@"); break ;;
    *) usage ;;
  esac
done
[ -n "$OUT" ] || usage
mkdir -p "$OUT" || { echo "pr-ab: cannot create --out $OUT; pass a writable folder" >&2; exit 2; }
OUT=$(cd "$OUT" && pwd)
DB=$OUT/tidemark.duckdb
rm -f "$OUT/verdict.md"

# The labels name the sides for the gate (and on the site), whatever the overrides are. A
# partial or interrupted ab still stored what it measured: the gate says what it can tell.
ab=0
"$TIDEMARK" ab "${METRICS[@]}" --a label=pr-base "${A[@]}" --b label=pr-head "${B[@]}" -- \
  "${COMMON[@]}" "db=$DB" "results_dir=$OUT" "data_dir=$OUT/data" 2> "$OUT/ab.err" || ab=$?
cat "$OUT/ab.err" >&2

code=0
"$TIDEMARK" gate --db "$DB" --baseline label=pr-base --candidate label=pr-head "${METRICS[@]}" \
  --summary "$OUT/verdict.md" || code=$?
if [ "$ab" -ne 0 ] && [ "$code" -ne 1 ]; then
  code=2  # never a pass over a measurement that did not finish
  if [ ! -f "$OUT/verdict.md" ]; then
    printf '### ⚠️ tidemark gate: cannot tell\n\n- tidemark ab exited %s: %s\n' "$ab" \
      "$(grep -v '^\s*$' "$OUT/ab.err" | tail -n 1)" > "$OUT/verdict.md"
  fi
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$OUT/verdict.md" ]; then
  cat "$OUT/verdict.md" >> "$GITHUB_STEP_SUMMARY"
fi
# The site is the artifact; if it cannot be built, the gate's code still stands.
if [ -f "$DB" ] && "$TIDEMARK" site --db "$DB" --out "$OUT/site-build"; then
  rm -rf "$OUT/site"
  mv "$OUT/site-build/site" "$OUT/site"
else
  echo "pr-ab: no site built (see above)" >&2
fi
echo "pr-ab: gate exit $code; verdict $OUT/verdict.md; site $OUT/site/index.html"
exit "$code"

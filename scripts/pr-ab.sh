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
    --out) OUT=$2; shift 2 ;;
    --metric) METRICS+=(--metric "$2"); shift 2 ;;
    --a) A+=(--a "$2"); shift 2 ;;
    --b) B+=(--b "$2"); shift 2 ;;
    --) shift; COMMON=("$@"); break ;;
    *) usage ;;
  esac
done
[ -n "$OUT" ] || usage
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
DB=$OUT/tidemark.duckdb

# The labels name the sides for the gate (and on the site), whatever the overrides are.
"$TIDEMARK" ab "${METRICS[@]}" --a label=pr-base "${A[@]}" --b label=pr-head "${B[@]}" -- \
  "${COMMON[@]}" "db=$DB" "results_dir=$OUT" "data_dir=$OUT/data"

set +e
"$TIDEMARK" gate --db "$DB" --baseline label=pr-base --candidate label=pr-head "${METRICS[@]}" \
  --summary "$OUT/verdict.md"
code=$?
set -e
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$OUT/verdict.md" ]; then
  cat "$OUT/verdict.md" >> "$GITHUB_STEP_SUMMARY"
fi
"$TIDEMARK" site --db "$DB" --out "$OUT/site-build"
rm -rf "$OUT/site"
mv "$OUT/site-build/site" "$OUT/site"
echo "pr-ab: gate exit $code; verdict $OUT/verdict.md; site $OUT/site/index.html"
exit "$code"

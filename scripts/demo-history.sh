#!/usr/bin/env bash
# A small real history for the demo site (`make screenshots`): real LevelDB runs on small data
# sets (the engine build is cached), a cold/warm/hot x threads sweep on two data sets, a value
# size sweep, a debug build beside release, run notes and four imported result files.
# Usage: scripts/demo-history.sh OUT_DIR   (the database is OUT_DIR/tidemark.duckdb; ~3 minutes)
set -euo pipefail
out=${1:?usage: scripts/demo-history.sh OUT_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
tidemark="$here/.venv/bin/tidemark"
data="$here/tests/data"
mkdir -p "$out"
db="$out/tidemark.duckdb"
rm -f "$db" "$db.wal"
where=(db="$db" results_dir="$out" data_dir="$out/data")

run() { "$tidemark" run "$@" engine=leveldb "${where[@]}" >/dev/null; }

# Imported history first (its dates are older than any run).
"$tidemark" import "$data/gbench/demo_reps3_libbenchmark1.7.1.json" --format gbench_json \
    --machine ci-vm --engine rocksdb --engine-version 7.8.3 --date 2024-03-01 --db "$db"
"$tidemark" import "$data/hyperfine/sleep_runs5.json" --format hyperfine_json \
    --date 2024-05-01 --db "$db"
"$tidemark" import "$data/rocksdb/readrandom_t2.stdout" --format db_bench_rocksdb --threads 2 \
    --machine lab-box --engine-version 7.8.3 --date 2024-06-01 --db "$db"
"$tidemark" import "$data/leveldb/readrandom_t2.stdout" --format db_bench_leveldb --threads 2 \
    --machine lab-box --engine-version 1.23 --date 2024-06-02 --db "$db"

# Cache states on two data sets, a value size sweep, and an instrumented build (its numbers
# carry a caveat on every page).
sweep="suite.items=[{workload: fillseq, params: {num: 20000}}, {workload: readrandom, threads: [1, 2], params: {num: 20000}}]"
run -m workload=readrandom cache=cold,warm,hot workload.params.num=20000,100000 repetitions=4
run suite=smoke "suite.items=[{workload: fillrandom, params: {num: 20000, value_size: 100}}, {workload: fillrandom, params: {num: 20000, value_size: 400}}, {workload: fillrandom, params: {num: 20000, value_size: 1000}}, {workload: fillrandom, params: {num: 20000, value_size: 4000}}]" repetitions=4
run suite=tiny "$sweep" build=debug repetitions=4
"$tidemark" note latest "Debug build for the demo: assertions on, no optimisation." --db "$db"
# Three runs of the same small suite, newest last: a trend, a baseline, a summary with verdicts.
run suite=tiny "$sweep" label=baseline
run suite=tiny "$sweep"
run suite=tiny "$sweep" note="Demo run: the newest of three runs of the same suite."

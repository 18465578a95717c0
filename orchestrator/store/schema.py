"""The results database's schema, as numbered migrations (version N is applied once, in order),
and the one list of an invocation's columns.

A migration is a list of SQL statements or functions of the connection (for a change SQL cannot
compute, such as a new series key)."""
from __future__ import annotations

import json
from typing import Any

from ..analysis.identity import SERIES_KEYS, series_key
from ..record import Invocation


def to_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


# An invocation's columns, in table order; invocation_row gives its values in the same order.
INVOCATION_COLUMNS = ("invocation_id", "run_id", "seq", "workload", "benchmark", "phase",
                      "repetition", "threads", "params", "cache_state", "series_key", "status",
                      "error", "exit_code", "wall_s", "user_s", "sys_s", "max_rss_kb",
                      "started_at", "ended_at", "command", "log_path", "notes", "conditions")
_JSON_FIELDS = {"params": dict, "command": list, "notes": list, "conditions": dict}


def invocation_row(inv: Invocation) -> list[Any]:
    """The values of INVOCATION_COLUMNS for one invocation (JSON columns as text)."""
    values = []
    for column in INVOCATION_COLUMNS:
        value = inv.invocation_id if column == "invocation_id" else getattr(inv, column)
        if column in _JSON_FIELDS:
            value = to_json(_JSON_FIELDS[column](value))
        values.append(value)
    return values


def _rekey_series(con: Any) -> None:
    """Series keys hash only what must match (analysis.identity.SERIES_KEYS): compiler version
    and CMake flags moved to the named level, so series split by them merge."""
    rows = con.execute(f"SELECT series_key, {', '.join(SERIES_KEYS)} FROM series").fetchall()
    mapping = []
    for row in rows:
        identity = dict(zip(SERIES_KEYS, row[1:]))
        identity["params"] = json.loads(identity["params"]) if identity["params"] else {}
        mapping.append((row[0], series_key(identity)))
    con.execute("CREATE TEMP TABLE series_rekey (old VARCHAR, new VARCHAR)")
    if mapping:
        con.executemany("INSERT INTO series_rekey VALUES (?, ?)", mapping)
    for table in ("invocations", "aggregates"):
        con.execute(f"UPDATE {table} SET series_key = k.new FROM series_rekey k "
                    f"WHERE {table}.series_key = k.old")
    columns = ", ".join(SERIES_KEYS)
    con.execute("""CREATE TABLE series_v4 (
        series_key VARCHAR PRIMARY KEY, engine VARCHAR, workload VARCHAR, benchmark VARCHAR,
        params JSON, threads INTEGER, cache_state VARCHAR, build_variant VARCHAR,
        machine_fingerprint VARCHAR)""")
    con.execute(f"INSERT INTO series_v4 (series_key, {columns}) SELECT k.new, {columns} "
                f"FROM series s JOIN series_rekey k ON k.old = s.series_key "
                f"ON CONFLICT DO NOTHING")
    con.execute("DROP TABLE series")
    con.execute("ALTER TABLE series_v4 RENAME TO series")
    con.execute("DROP TABLE series_rekey")



MIGRATIONS: list[tuple[int, list[Any]]] = [
    (1, [
        """CREATE TABLE machines (
            fingerprint VARCHAR PRIMARY KEY, hostname VARCHAR, cpu_model VARCHAR,
            logical_cpus INTEGER, ram_gib DOUBLE, facts JSON, first_seen TIMESTAMPTZ)""",
        """CREATE TABLE builds (
            build_id VARCHAR PRIMARY KEY, engine VARCHAR, version VARCHAR, variant VARCHAR,
            source_kind VARCHAR, source_package VARCHAR, source_version VARCHAR,
            compiler VARCHAR, compiler_version VARCHAR, cmake_version VARCHAR,
            cmake_flags JSON, build_seconds DOUBLE, binary_sha256 VARCHAR,
            provenance JSON, created_at TIMESTAMPTZ)""",
        """CREATE TABLE runs (
            run_id VARCHAR PRIMARY KEY, started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ,
            status VARCHAR, engine VARCHAR, engine_version VARCHAR, build_variant VARCHAR,
            build_id VARCHAR, build_cached BOOLEAN, machine_fingerprint VARCHAR,
            suite VARCHAR, label VARCHAR, cache_state VARCHAR, config JSON, overrides JSON,
            tidemark_sha VARCHAR, machine_state JSON, planned_invocations INTEGER,
            verified BOOLEAN, notes JSON)""",
        """CREATE TABLE series (
            series_key VARCHAR PRIMARY KEY, engine VARCHAR, workload VARCHAR,
            benchmark VARCHAR, params JSON, threads INTEGER, cache_state VARCHAR,
            build_variant VARCHAR, compiler_version VARCHAR, cmake_flags JSON,
            machine_fingerprint VARCHAR)""",
        """CREATE TABLE invocations (
            invocation_id VARCHAR PRIMARY KEY, run_id VARCHAR, seq INTEGER, workload VARCHAR,
            benchmark VARCHAR, phase VARCHAR, repetition INTEGER, threads INTEGER,
            params JSON, cache_state VARCHAR, series_key VARCHAR, status VARCHAR,
            error VARCHAR, exit_code INTEGER, wall_s DOUBLE, user_s DOUBLE, sys_s DOUBLE,
            max_rss_kb BIGINT, started_at TIMESTAMPTZ, ended_at TIMESTAMPTZ, command JSON,
            log_path VARCHAR, notes JSON, conditions JSON)""",
        """CREATE TABLE metrics (
            invocation_id VARCHAR, name VARCHAR, value DOUBLE, unit VARCHAR, better VARCHAR)""",
        """CREATE TABLE histograms (
            invocation_id VARCHAR, name VARCHAR, bucket_lo DOUBLE, bucket_hi DOUBLE,
            count BIGINT)""",
        """CREATE TABLE timeseries (
            invocation_id VARCHAR, name VARCHAR, t DOUBLE, value DOUBLE)""",
        "CREATE INDEX metrics_invocation ON metrics (invocation_id)",
        "CREATE INDEX invocations_run ON invocations (run_id)",
    ]),
    # Imported runs (tidemark import) and the statistics a tool computed itself (Google
    # Benchmark mean/median/stddev/cv/BigO/RMS, hyperfine mean/median/...): never repetitions.
    (2, [
        "ALTER TABLE runs ADD COLUMN source VARCHAR DEFAULT 'run'",  # run | import
        "ALTER TABLE runs ADD COLUMN source_sha256 VARCHAR",  # the imported file's sha256
        "ALTER TABLE runs ADD COLUMN source_meta JSON",  # format, file, tool context
        """CREATE TABLE aggregates (
            run_id VARCHAR, series_key VARCHAR, workload VARCHAR, benchmark VARCHAR,
            threads INTEGER, params JSON, aggregate VARCHAR, name VARCHAR, value DOUBLE,
            unit VARCHAR, better VARCHAR, notes JSON)""",
        "CREATE INDEX aggregates_run ON aggregates (run_id)",
    ]),
    # tidemark ab: two runs measured interleaved in one job; schedule = the seeded order per round.
    (3, [
        """CREATE TABLE ab_pairs (
            ab_id VARCHAR PRIMARY KEY, run_a VARCHAR, run_b VARCHAR, seed BIGINT,
            same_build BOOLEAN, overrides_a JSON, overrides_b JSON, schedule JSON,
            created_at TIMESTAMPTZ)""",
    ]),
]

# Two levels of series identity (analysis.identity): the runner joins the named level.
MIGRATIONS.append((4, ["ALTER TABLE runs ADD COLUMN runner VARCHAR DEFAULT 'host'", _rekey_series]))

# A/B designs (analysis.paired): how the two sides were measured decides how they are analysed.
# Jobs stored before v5 ran today's interleaved order (their schedule says so): they are
# analysed as interleaved pairs. `adaptive` holds the stopping rule's budget and what it used
# (analysis.sequential); NULL for a fixed number of rounds.
MIGRATIONS.append((5, [
    "ALTER TABLE ab_pairs ADD COLUMN design VARCHAR DEFAULT 'interleaved'",
    "ALTER TABLE ab_pairs ADD COLUMN adaptive JSON",
]))

# Resumable runs (orchestrator/plan/resume.py): `sweep` names the `tidemark run -m` a run belongs to
# (its id, its argv and the job's number), so `--resume` can finish the whole sweep; `resumes`
# lists each `tidemark run --resume` of the run (when, what it kept, what it ran).
MIGRATIONS.append((6, [
    "ALTER TABLE runs ADD COLUMN sweep JSON",
    "ALTER TABLE runs ADD COLUMN resumes JSON",
]))

# Run bundles (orchestrator/history/bundle.py, `tidemark ingest`): one row per merged bundle, keyed by
# the sha256 of its manifest, so the same bundle twice adds nothing; which runs it brought,
# from which host, and any check that failed softly (e.g. a build whose binary differs from the
# one the history already has under the same build id) in `notes`.
MIGRATIONS.append((7, [
    """CREATE TABLE bundles (
        bundle_id VARCHAR PRIMARY KEY, run_ids JSON, source VARCHAR, host VARCHAR,
        created_at TIMESTAMPTZ, ingested_at TIMESTAMPTZ, schema_version INTEGER,
        manifest JSON, notes JSON)""",
]))

# Notes a person wrote about a run (`tidemark note RUN "text"`, or `note=` at run time): the prose
# a report carries beside its numbers, kept apart from the notes Tidemark writes (runs.notes,
# which also decide whether a run is verified). origin: note (the command) | run (note=).
MIGRATIONS.append((8, [
    """CREATE TABLE run_notes (
        run_id VARCHAR, created_at TIMESTAMPTZ, text VARCHAR, origin VARCHAR)""",
]))

# Commit-aware history (orchestrator/build/revision.py): the commit a build compiled, so trends
# can run in commit order and every comparison names its commits. NULL for a Debian source.
MIGRATIONS.append((9, [
    "ALTER TABLE builds ADD COLUMN commit_sha VARCHAR",
    "ALTER TABLE builds ADD COLUMN commit_subject VARCHAR",
    "ALTER TABLE builds ADD COLUMN commit_author VARCHAR",
    "ALTER TABLE builds ADD COLUMN commit_date TIMESTAMPTZ",
    "ALTER TABLE builds ADD COLUMN commit_dirty VARCHAR",
    """UPDATE builds SET commit_sha = nullif(json_extract_string(provenance, '$.revision.sha'), ''),
        commit_subject = json_extract_string(provenance, '$.revision.subject'),
        commit_author = json_extract_string(provenance, '$.revision.author'),
        commit_date = TRY_CAST(nullif(json_extract_string(provenance, '$.revision.date'), '')
                               AS TIMESTAMPTZ),
        commit_dirty = nullif(json_extract_string(provenance, '$.revision.dirty'), '')""",
]))

# Confirmations (`tidemark gate --confirm`, analysis.confirm): each flagged series of a gate,
# what the between-run comparison showed, the paired job (ab_id) that re-measured it and its
# verdict: confirmed | not confirmed | cannot tell | provisional (not re-measured: `why`).
MIGRATIONS.append((10, [
    """CREATE TABLE confirmations (
        base_run VARCHAR, cand_run VARCHAR, series_key VARCHAR, metric VARCHAR, label VARCHAR,
        verdict VARCHAR, between JSON, paired JSON, same_build BOOLEAN, ab_id VARCHAR,
        why VARCHAR, created_at TIMESTAMPTZ)""",
]))

# Bisects (`tidemark bisect`, analysis.bisect): the range, the workload overrides, every judged
# commit's step (its paired job, verdict, interval, build) and what was found; an unfinished
# one (status 'running') is resumed by the same command from its stored steps.
MIGRATIONS.append((11, [
    """CREATE TABLE bisects (
        bisect_id VARCHAR PRIMARY KEY, repo VARCHAR, good VARCHAR, bad VARCHAR,
        overrides JSON, metric VARCHAR, commits JSON, steps JSON, status VARCHAR,
        first_bad VARCHAR, created_at TIMESTAMPTZ, updated_at TIMESTAMPTZ)""",
]))

# Alerts (analysis.alerts): each confirmed change, with the state people give it
# (`tidemark alert`: new → acknowledged | false alarm | fixed) and when, why and by what.
MIGRATIONS.append((12, [
    """CREATE TABLE alerts (
        alert_id VARCHAR PRIMARY KEY, created_at TIMESTAMPTZ, base_run VARCHAR, cand_run VARCHAR,
        series_key VARCHAR, metric VARCHAR, label VARCHAR, direction VARCHAR, ab_id VARCHAR,
        between_change DOUBLE, paired_change DOUBLE, threshold DOUBLE, state VARCHAR,
        state_at TIMESTAMPTZ, note VARCHAR, fixed_by VARCHAR)""",
]))

# A fleet node's clock error (orchestrator/history/clock.py): seconds its clock was ahead (+) or
# behind (-) the ingest side's when its bundle was sealed, NULL when within the tolerance or
# measured here. A run's stored times are corrected by it; the node's own are these plus it.
MIGRATIONS.append((13, ["ALTER TABLE runs ADD COLUMN clock_skew_s DOUBLE"]))

LATEST_VERSION = MIGRATIONS[-1][0]

"""The results database's schema, as numbered migrations (version N is applied once, in order)."""

MIGRATIONS: list[tuple[int, list[str]]] = [
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

LATEST_VERSION = MIGRATIONS[-1][0]

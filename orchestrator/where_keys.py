"""The config keys that say where results and data go and how long to wait, not what is
measured (pure): a resumed run may change them, and a run's page leaves them out of the
command that reproduces it. A module of its own so that readers of the results (the site) need
not import the run's planning and its config schema."""

WHERE_KEYS = frozenset({"db", "results_dir", "data_dir", "cache_dir", "db_lock_wait_s",
                        "build_jobs", "keep_data"})

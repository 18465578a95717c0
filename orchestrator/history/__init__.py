"""History (side effects): imported result files, run bundles and their ingest into the results DB."""

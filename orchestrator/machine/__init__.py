"""Machine stage (side effects): probe facts, check and tune, shield CPUs, cgroups, run one pinned process."""

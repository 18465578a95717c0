"""Run stage (side effects): one `tidemark run` job, `tidemark ab`, fleet sweeps, the terminal progress."""

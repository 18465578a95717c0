"""Step runners and the one run loop.

`tidemark run` and `tidemark ab` hand the loop (loop.py) an ordered list of (context, step);
the loop asks select.py for the StepRunner (base.py) of each step (db_bench.py, gbench.py),
whose process runs on this host (process.py) or, with runner=docker, in a container
(container.py), and stores every invocation as soon as it ends. Cache states are prepared and
verified in cache.py, on the host's page cache for both.
"""

# Two entry points: `make bench` and `make test`. Both set the machine up first (idempotent).
VENV  := .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# The site's browser-side packages (DuckDB-WASM for the SQL page), pinned in package-lock.json.
NPM_STAMP := node_modules/.installed-stamp
# Extra Hydra overrides for `make bench`, e.g. make bench ARGS="engine=leveldb"
ARGS  ?=

.PHONY: setup system venv npm bench site site-bench site-tools-bench screenshots test test-fast fuzz clean

setup: system venv npm

system:
	bash scripts/setup-system.sh

venv: $(STAMP)

# The C source too: pip install compiles it (pyproject.toml: ext-modules).
$(STAMP): pyproject.toml constraints.txt orchestrator/analysis/_edivisive.c
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[test]'
	touch $(STAMP)

npm: $(NPM_STAMP)

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(NPM_STAMP)

# Build the engine (cached), run the default profile (suite=smoke), store, publish the site.
bench: setup
	$(VENV)/bin/tidemark run $(ARGS)
	$(VENV)/bin/tidemark site

site: venv npm
	$(VENV)/bin/tidemark site

# Two workers, a test file each at a time: one at a time the suite kept 2 CPUs 61 % busy, as
# its end-to-end tests wait on engines, schedulers and browsers (1,945 s → 1,078-1,186 s, on
# 2026-11-29; ARCHITECTURE.md, Tests). Each file stays in one worker, with its module fixtures.
test: setup
	$(PY) -m pytest -n 2 --dist loadfile -q -ra --durations=25

# Pure-logic tests only: no engine build, no browser.
test-fast: venv
	$(PY) -m pytest -q -m "not engine and not browser"

# Time `tidemark site` on a synthetic history of 1,000 runs × 200 series (benchmarks/site_speed.json);
# SITE_RUNS=1000,10000 measures the 10,000-run history too (its generation takes about 20 minutes).
SITE_RUNS ?= 1000
site-bench: venv
	$(PY) benchmarks/site_speed.py --runs $(SITE_RUNS)

# What the Compare, Downloads and SQL tools add to `tidemark site` on the same synthetic history
# (benchmarks/site_tools_cost.json).
site-tools-bench: venv npm
	$(PY) benchmarks/site_tools_cost.py

# A demo site from a small real history (LevelDB runs, a cache-state sweep, a debug build, notes,
# four imported files; scripts/demo-history.sh, ~3 minutes) and 1,400 px screenshots of its
# home, summary and readrandom pages in headless Chromium, committed under docs/screenshots/.
screenshots: setup
	bash scripts/demo-history.sh build/demo
	$(VENV)/bin/tidemark site --db build/demo/tidemark.duckdb --out build/demo-site
	$(PY) scripts/screenshots.py build/demo-site/site docs/screenshots

# Fuzz every output adapter: all cuts of every captured output + 100,000 mutations per format
# (benchmarks/fuzz_adapters.py; figures in benchmarks/fuzz_adapters.json and the README).
fuzz: venv
	$(PY) benchmarks/fuzz_adapters.py

clean:
	rm -rf build results

# Two entry points: `make bench` and `make test`. Both set the machine up first (idempotent).
VENV  := .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# Extra Hydra overrides for `make bench`, e.g. make bench ARGS="engine=leveldb"
ARGS  ?=

.PHONY: setup system venv bench site site-bench screenshots test test-fast fuzz clean

setup: system venv

system:
	bash scripts/setup-system.sh

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[test]'
	touch $(STAMP)

# Build the engine (cached), run the default profile (suite=smoke), store, publish the site.
bench: setup
	$(VENV)/bin/tidemark run $(ARGS)
	$(VENV)/bin/tidemark site

site: venv
	$(VENV)/bin/tidemark site

test: setup
	$(PY) -m pytest -q -ra

# Pure-logic tests only: no engine build, no browser.
test-fast: venv
	$(PY) -m pytest -q -m "not engine and not browser"

# Time `tidemark site` on a synthetic history of 1,000 runs × 200 series (benchmarks/site_speed.json).
site-bench: venv
	$(PY) benchmarks/site_speed.py

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

# Two commands do all the set-up from a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench install clean layers lint

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# Screen the made-up sample sites on the Village's real layers; outputs go to out/.
demo: $(STAMP)
	mkdir -p out
	$(VENV)/bin/esc-gis rules
	$(VENV)/bin/esc-gis screen examples/demo/sites.geojson --disturbed examples/demo/disturbed.geojson \
		-o out/demo_screening.gpkg --overwrite
	$(VENV)/bin/esc-gis screen examples/demo/sites.geojson --disturbed examples/demo/disturbed.geojson \
		-o out/demo_screening.csv --overwrite --quiet
	$(VENV)/bin/esc-gis screen examples/demo/sites.geojson --disturbed examples/demo/disturbed.geojson \
		-o out/demo_screening.geojson --overwrite --quiet
	$(VENV)/bin/esc-gis screen examples/demo/sites.geojson --disturbed examples/demo/disturbed.geojson \
		-o out/demo_screening.parquet --overwrite --quiet
	@echo "Outputs: out/demo_screening.{gpkg,csv,geojson,parquet}"

test: $(STAMP)
	$(PY) -m pytest

# Style and types (not part of `make test`).
lint: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev]'
	$(VENV)/bin/ruff check src tests scripts benchmarks
	$(VENV)/bin/mypy src/esc_gis

# Benchmarks are run by hand, never by `make test`.
bench: $(STAMP)
	$(PY) benchmarks/bench_screen.py --n 100000

# Rebuild the bundled layers and demo sites from ../shared/layers-real (needs that folder).
layers: $(STAMP)
	$(PY) scripts/prepare_winneconne_layers.py --overwrite
	$(PY) scripts/make_demo_sites.py

clean:
	rm -rf $(VENV) out .pytest_cache

# Two commands do all the set-up from a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-deep bench bench-compare bench-docs install clean constraints docs layers lint mutation qgis-plugin qgis-screenshots wheel

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,serve,dask]'
	touch $(STAMP)

install: $(STAMP)

# Leaflet from npm (package-lock.json): served to the browser tests in place of the CDN, and the
# source of the copy that ships in esc_gis for --offline maps (scripts/vendor_leaflet.py; a test
# checks the copy against it). Without npm, the browser tests skip; offline maps still work.
ASSETS := node_modules/.package-lock.json
$(ASSETS): package.json package-lock.json
	@if command -v npm >/dev/null 2>&1; then npm ci --no-audit --no-fund --loglevel=error; \
	else echo "npm not found: --offline maps and the browser tests need Node.js's npm (they will skip)."; fi

# Screen the made-up sample sites on the Village's real boundary and lake, with the demo's
# ILLUSTRATIVE waters and targeted area and SYNTHETIC DEM (layers/winneconne-demo); outputs go to out/.
DEMO_LAYERS := layers/winneconne-demo/layers.toml
DEMO_SITES  := examples/demo/sites.geojson --disturbed examples/demo/disturbed.geojson --layers $(DEMO_LAYERS)
PERMITS     := $(VENV)/bin/esc-gis permits
REG         := out/demo_permits.gpkg

demo: $(STAMP) $(ASSETS)
	mkdir -p out
	# The profile's tables go to a file (about 1,250 lines): the console starts with the screening's summary.
	$(VENV)/bin/esc-gis rules > out/demo_rules.txt
	$(VENV)/bin/esc-gis screen $(DEMO_SITES) -o out/demo_screening.gpkg --overwrite
	for ext in csv geojson parquet; do \
		$(VENV)/bin/esc-gis screen $(DEMO_SITES) -o out/demo_screening.$$ext --overwrite --quiet || exit 1; \
	done
	$(VENV)/bin/esc-gis slope layers/winneconne-demo/dem_synthetic.tif -o out/demo_slope_pct.tif --overwrite
	$(VENV)/bin/esc-gis steep layers/winneconne-demo/dem_synthetic.tif -o out/demo_steep.gpkg \
		--min-area-sqft 200 --overwrite
	# Soil loss per site, phase and 12-month window, with a MADE-UP soils layer, schedule and
	# erosivity distribution. R = 120 is a PLACEHOLDER, not a source value: no annual R for the
	# Village is confirmed (domain-reference § 3.4); take the real one from the WDNR sheet.
	$(VENV)/bin/esc-gis soil-loss examples/demo/sites.geojson --dem layers/winneconne-demo/dem_synthetic.tif \
		--soils layers/winneconne-demo/soils_made_up.gpkg --schedule examples/demo/schedule_made_up.csv \
		--disturbed examples/demo/disturbed.geojson --r-annual 120 --ei-file examples/demo/ei_monthly_made_up.csv \
		--id-field site_id --layers $(DEMO_LAYERS) -o out/demo_soil_loss.gpkg --raster out/demo_soil_loss_cells.tif \
		--overwrite
	$(VENV)/bin/esc-gis protective --layers $(DEMO_LAYERS) -o out/demo_protective_areas.gpkg --overwrite
	$(VENV)/bin/esc-gis map out/demo_screening.gpkg --layers $(DEMO_LAYERS) -o out/demo_overview.html --overwrite
	$(VENV)/bin/esc-gis map out/demo_screening.gpkg --site S16 --layers $(DEMO_LAYERS) \
		--disturbed examples/demo/disturbed.geojson --steep out/demo_steep.gpkg -o out/demo_site_S16.html --overwrite
	-$(VENV)/bin/esc-gis map out/demo_screening.gpkg --site S21 --layers $(DEMO_LAYERS) --offline \
		--disturbed examples/demo/disturbed.geojson -o out/demo_site_S21_offline.html --overwrite
	# The permit registry: made-up permits imported, moved along, their deadlines, the public map.
	rm -f $(REG)
	$(PERMITS) init $(REG) --layers $(DEMO_LAYERS)
	$(PERMITS) import $(REG) examples/demo/permits.geojson --disturbed examples/demo/permit_disturbed.geojson \
		--layers $(DEMO_LAYERS) --who demo
	# An application is complete only with its fee; the schedule (made-up amounts) is the office's data.
	$(PERMITS) fee $(REG) ESC-2026-0103 --kind application --amount 12.34 --paid-on 2026-11-02 --receipt DEMO-R-0001 \
		--fees examples/fee-schedule.example.toml --layers $(DEMO_LAYERS) --who demo
	$(PERMITS) transition $(REG) ESC-2026-0103 under_review --on 2026-11-03 --layers $(DEMO_LAYERS) --who demo
	$(PERMITS) transition $(REG) ESC-2026-0107 stop_work --on 2026-11-25 --layers $(DEMO_LAYERS) --who demo \
		--reasons "Silt fence down along Mill Creek; sediment in the channel (540-7B(3)(a))."
	$(PERMITS) extend $(REG) ESC-2026-0102 120 --on 2026-11-20 --reasons "Paving moved to spring" \
		--layers $(DEMO_LAYERS) --who demo
	$(PERMITS) update $(REG) ESC-2026-0101 --inspected 2026-11-20 --start-notice 2026-08-24T15:00 \
		--stockpile-since 2026-11-16 --layers $(DEMO_LAYERS) --who demo
	$(PERMITS) update $(REG) ESC-2026-0105 --inspected 2026-11-25 --work-stopped 2026-11-10 \
		--layers $(DEMO_LAYERS) --who demo
	# An inspection report with a (made-up) photo; its two deficiencies open 24-hour repairs, one is repaired.
	$(PERMITS) inspect $(REG) ESC-2026-0102 --by holder --at 2026-11-27T10:00 --inspector "Pat Demo" \
		--assessment "Silt fence sagging on the east side; inlet protection full of sediment" \
		--work-done "Tracking pad re-graveled" --phase "Foundations poured; backfilling" \
		--deficiency "Silt fence down along the east edge" --deficiency "Inlet protection at the catch basin clogged" \
		--notified 2026-11-27T11:00 --photo examples/demo/inspection_photo_made_up.png \
		--point 744779.4 503274.0 --layers $(DEMO_LAYERS) --who demo
	$(PERMITS) repaired $(REG) ESC-2026-0102 --deficiency 1 --on 2026-11-28T09:00 --detail "Fence re-set and staked" \
		--layers $(DEMO_LAYERS) --who demo
	# An enforcement case on a screened site that needs a permit and has none (a made-up fill pad),
	# and the stop-work order posted on it.
	$(VENV)/bin/esc-gis screen examples/demo/unpermitted_site.geojson --layers $(DEMO_LAYERS) \
		-o out/demo_unpermitted_screening.gpkg --overwrite --quiet
	$(PERMITS) enforce $(REG) --site-layer out/demo_unpermitted_screening.gpkg --site-id U01 --ground A1 \
		--on 2026-11-24 --reasons "Fill pad graded, about 6,400 sq ft; no permit applied for" \
		--layers $(DEMO_LAYERS) --who demo
	$(PERMITS) case $(REG) ENF-2026-0001 --stop-work 2026-11-25 --reasons "Stop-work order posted at the entrance" \
		--layers $(DEMO_LAYERS) --who demo
	$(PERMITS) appeal $(REG) --case ENF-2026-0001 --appealed "Stop-work order of 2026-11-25" --kind stop_work_order \
		--appellant "Made-up Landowner" --appellant-kind aggrieved_person --on 2026-11-26 \
		--grounds "Says the pad is under the permit threshold" --layers $(DEMO_LAYERS) --who demo
	$(PERMITS) decide $(REG) APL-2026-0001 --body zoning_board_of_appeals --outcome upheld --on 2026-11-28 \
		--layers $(DEMO_LAYERS) --who demo
	# A letter of credit held as the financial guarantee (its expiry is a deadline), and a draw on it.
	$(PERMITS) guarantee $(REG) ESC-2026-0102 --type letter_of_credit --amount 2500 --received-on 2026-11-20 \
		--expires 2027-01-15 --layers $(DEMO_LAYERS) --who demo
	$(PERMITS) guarantee-event $(REG) 1 --on 2026-11-29 --draw 150 --reason "Office re-set the silt fence" --notice-on 2026-11-27 \
		--layers $(DEMO_LAYERS) --who demo
	$(PERMITS) guarantees $(REG) --layers $(DEMO_LAYERS)
	# The plan approved with the permit, then an amendment (B2: the plan's actions failed to hold
	# the sediment), in effect from the written permission; only its plan date is public.
	$(PERMITS) amend $(REG) ESC-2026-0102 --trigger original --description "Plan as approved with the permit" \
		--plan-date 2026-05-20 --layers $(DEMO_LAYERS) --who demo
	$(PERMITS) amend $(REG) ESC-2026-0102 --trigger B2 --plan-date 2026-11-28 --permission-on 2026-11-29 \
		--description "Second row of silt fence and a sediment trap along the east edge" \
		--permission-by "Made-up Director of Public Works" --requested-by "Made-up Builder" --layers $(DEMO_LAYERS) --who demo
	$(PERMITS) amendments $(REG) --layers $(DEMO_LAYERS)
	$(PERMITS) receipts $(REG) -o out/demo_fee_receipts.csv --overwrite --layers $(DEMO_LAYERS)
	$(PERMITS) cases $(REG) --layers $(DEMO_LAYERS)
	$(PERMITS) appeals $(REG) --layers $(DEMO_LAYERS)
	$(PERMITS) list $(REG) --layers $(DEMO_LAYERS)
	$(PERMITS) due $(REG) --on 2026-11-30 --rain examples/demo/rain.csv --layers $(DEMO_LAYERS)
	$(PERMITS) calendar $(REG) -o out/demo_deadlines.ics --on 2026-11-30 --rain examples/demo/rain.csv \
		--overwrite --layers $(DEMO_LAYERS)
	$(PERMITS) export $(REG) -o out/demo_permits_public.csv --overwrite --layers $(DEMO_LAYERS)
	$(PERMITS) map $(REG) --public -o out/demo_public_permits.html --overwrite --layers $(DEMO_LAYERS)
	-$(PERMITS) map $(REG) --public --offline -o out/demo_public_permits_offline.html --overwrite \
		--layers $(DEMO_LAYERS)
	# The site's weekly inspection reports (private: notes and photos; PDF needs chromium), the office's
	# inspection log and summary for November, and the private archive of inspections with their photos.
	$(PERMITS) report $(REG) ESC-2026-0102 -o out/demo_permits_report.html --overwrite --layers $(DEMO_LAYERS)
	-$(PERMITS) report $(REG) ESC-2026-0102 -o out/demo_permits_report.pdf --overwrite --layers $(DEMO_LAYERS)
	$(PERMITS) report $(REG) --from 2026-11-01 --to 2026-11-30 -o out/demo_permits_inspection_log.csv --overwrite \
		--layers $(DEMO_LAYERS)
	for ext in csv html; do \
		$(PERMITS) summary $(REG) --from 2026-11-01 --to 2026-11-30 --rain examples/demo/rain.csv \
			-o out/demo_permits_summary.$$ext --overwrite --layers $(DEMO_LAYERS) || exit 1; \
	done
	$(PERMITS) export-inspections $(REG) -o out/demo_permits_inspections.zip --overwrite --layers $(DEMO_LAYERS)
	# Every table QGIS opens equals the fold of the permits' histories (exit 1 on any difference).
	$(PERMITS) verify $(REG) --layers $(DEMO_LAYERS)
	# The web service on the demo registry for a few seconds (127.0.0.1, a free port, no base map):
	# the permits collection and one screening read through OGC API, saved to out/demo_service_*.
	$(PY) scripts/serve_smoke.py --registry $(REG) --layers $(DEMO_LAYERS) --out-dir out
	# Plan review: the complete example reviews cleanly; the flawed one shows its findings.
	$(VENV)/bin/esc-gis review examples/plans/complete/plan.gpkg --layers $(DEMO_LAYERS) \
		-o out/demo_review_complete.html --json out/demo_review_complete.json --overwrite
	$(VENV)/bin/esc-gis review examples/plans/flawed/plan.gpkg --layers $(DEMO_LAYERS) \
		-o out/demo_review_flawed.html --json out/demo_review_flawed.json --overwrite
	# The phased example carries its schedule: the review redoes its soil loss on the DEM and made-up soils.
	$(VENV)/bin/esc-gis review examples/plans/phased/plan.gpkg --layers $(DEMO_LAYERS) \
		-o out/demo_review_phased.html --json out/demo_review_phased.json --overwrite
	$(PY) scripts/screenshot_maps.py out/demo_overview.html out/demo_site_S16.html out/demo_public_permits.html
	@echo "Outputs (each described in docs/start.md): out/demo_rules.txt (the profile: esc-gis rules),"
	@echo "         out/demo_screening.{gpkg,csv,geojson,parquet}, out/demo_slope_pct.tif, out/demo_steep.gpkg,"
	@echo "         out/demo_protective_areas.gpkg, out/demo_overview.html, out/demo_site_S16.html,"
	@echo "         out/demo_soil_loss.gpkg (+ .phases.csv, .windows.csv), out/demo_soil_loss_cells.tif (+ .qml),"
	@echo "         out/demo_site_S21_offline.html (opens without a network), the registry out/demo_permits.gpkg,"
	@echo "         out/demo_permits_public.csv, out/demo_public_permits.html (+ _offline, which opens without a network),"
	@echo "         out/demo_review_{complete,flawed,phased}.{html,json},"
	@echo "         the deadline feed out/demo_deadlines.ics, the fee receipts out/demo_fee_receipts.csv (private),"
	@echo "         the inspection reports out/demo_permits_report.{html,pdf}, the log out/demo_permits_inspection_log.csv,"
	@echo "         the office summary out/demo_permits_summary.{csv,html} and out/demo_permits_inspections.zip (private),"
	@echo "         the service's answers out/demo_service_permits.geojson and out/demo_service_screening.json,"
	@echo "         and PNG screenshots of the maps (needs chromium)"

test: $(STAMP) $(ASSETS)
	$(PY) -m pytest

# The property tests at length (Hypothesis's "deep" profile, tests/conftest.py): many more drawn
# sites through every door than CI's fixed set. Run by hand; about half an hour.
test-deep: $(STAMP) $(ASSETS)
	HYPOTHESIS_PROFILE=deep $(PY) -m pytest tests/test_every_door.py tests/test_screen.py tests/test_office_model.py

# Style and types (not part of `make test`). mypy stays on src/: the plugin (qgis/) runs under
# QGIS's Python, whose PyQGIS stubs (Debian's qgis/_core.pyi) do not type-check from the venv
# (qgis.core patches its classes at import, and PyQt5 has no stubs here).
lint: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev]'
	$(VENV)/bin/ruff format --check src tests scripts benchmarks qgis
	$(VENV)/bin/ruff check src tests scripts benchmarks qgis
	$(VENV)/bin/mypy src/esc_gis

# Mutation testing of the modules that decide legal outcomes ([tool.mutmut] in pyproject.toml):
# slow, so run by hand like the benchmarks, never by `make test`. MUTANTS narrows it, e.g.
# make mutation MUTANTS='esc_gis.rules*'. Survivors are explained in docs/explanation/mutation-survivors.md.
MUTANTS ?=
mutation: $(STAMP)
	$(PY) -m pip install --quiet -e '.[mutation]'
	rm -rf mutants
	$(VENV)/bin/mutmut run $(MUTANTS) > mutants.log 2>&1 || (tail -n 30 mutants.log; exit 1)
	$(PY) scripts/mutation_report.py

# The documentation site (docs/, Sphinx + MyST), warnings as errors; graphviz's `dot` draws the
# permit's state diagram. Open docs/_build/html/index.html. tests/test_docs_tutorials.py runs
# every command of the tutorials.
docs: $(STAMP)
	$(PY) -m pip install --quiet -e '.[docs]'
	$(VENV)/bin/sphinx-build -W --keep-going -q -b html docs docs/_build/html

# Benchmarks are run by hand, never by `make test`.
bench: $(STAMP)
	$(PY) benchmarks/bench_screen.py --n 100000

# Every benchmark on two commits side by side, each with its baseline (I/O floor, gdaldem, SAGA,
# rio) in the same rounds; exits 1 when HEAD is slower or larger beyond the noise it measured, or
# writes other rows or cells (benchmarks/compare.py). HEAD=. measures the working tree;
# CASES=screen_100k,slope_8000 narrows it; SAME_AS=<commit> judges the rows against another commit
# than BASE (when BASE predates a change in the profile's wording). About 15 minutes; the inputs stay in out/bench-data.
# `make bench-docs` then writes the run's table into docs/explanation/benchmarks.md.
ROUNDS ?= 3
bench-compare: $(STAMP)
	@test -n "$(BASE)" || { echo "usage: make bench-compare BASE=<commit> [HEAD=<commit>|.] [CASES=a,b] [ROUNDS=3]"; exit 2; }
	$(PY) benchmarks/compare.py run --base $(BASE) --head $(or $(HEAD),HEAD) --rounds $(ROUNDS) \
		$(if $(CASES),--cases $(CASES)) $(if $(SAME_AS),--same-as $(SAME_AS)) --json out/bench-compare.json

bench-docs: $(STAMP)
	cp out/bench-compare.json docs/explanation/bench-compare.json
	$(PY) benchmarks/compare.py render docs/explanation/bench-compare.json --docs docs/explanation/benchmarks.md

# Rebuild the bundled layers and demo sites from ../shared/layers-real (needs that folder).
layers: $(STAMP)
	$(PY) scripts/prepare_winneconne_layers.py --overwrite
	$(PY) scripts/make_demo_sites.py
	$(PY) scripts/make_demo_dem.py
	$(PY) scripts/make_demo_soils.py

clean:
	rm -rf $(VENV) out .pytest_cache

# A wheel that works without the clone (README, "Without a clone"): dist/esc_gis-*.whl and the
# sdist it is built from. `build` comes with the dev extra (the test extra has it too).
wheel: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) -m build -o dist .

# The container's Python packages (deploy/constraints.txt, each pinned with its hashes) from
# pyproject.toml's pins, resolved by uv (dev extra) for the container's CPython 3.11 on Linux, as
# PyPI stood at the moment the file records: run it after changing a pin (the same moment, the
# same file otherwise); MOMENT=now takes newer releases. tests/test_deploy_container.py compares.
MOMENT ?=
constraints: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) scripts/compile_constraints.py $(if $(MOMENT),--moment $(MOMENT))

# The QGIS Processing provider plugin (qgis/esc_gis_processing) zipped for QGIS's
# Plugins > Manage and Install Plugins > Install from ZIP. Needs no venv: plain Python.
qgis-plugin:
	$(PYTHON) scripts/build_qgis_plugin.py dist/esc_gis_processing.zip

# The README's QGIS screenshots (docs/img/qgis_*.png): the demo outputs as QGIS draws them with
# their own styles, and the provider's Screen sites dialog, rendered headless by Debian's PyQGIS
# (/usr/bin/python3 with python3-qgis and qgis-providers, not the venv). Needs `make demo`'s
# outputs (made first when missing); by hand, never by `make test`.
QGIS_PYTHON ?= /usr/bin/python3
qgis-screenshots:
	@test -f out/demo_screening.gpkg -a -f out/demo_slope_pct.tif -a -f out/demo_protective_areas.gpkg || $(MAKE) demo
	QT_QPA_PLATFORM=offscreen $(QGIS_PYTHON) scripts/qgis_screenshots.py --out docs/img

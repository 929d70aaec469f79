# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip -q --disable-pip-version-check

.PHONY: demo test test-fast slow-list install-test lint browser wheel fuzz bench grammars oracles-old clean vscode

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

demo: $(PY)
	$(PIP) install -e .
	$(VENV)/bin/shardconv demo

# The editable install with the test extra (`pip install -e` builds the compiled core in place), run again only
# when pyproject.toml or a source of native/ is newer than its stamp.
INSTALLED := $(VENV)/.installed
NATIVE_SOURCES := $(shell find native -path native/target -prune -o -type f \( -name '*.rs' -o -name 'Cargo.*' \) -print)
$(INSTALLED): $(PY) pyproject.toml $(NATIVE_SOURCES)
	$(PIP) install -e '.[test]'
	touch $@

# The guard rails: ruff and mypy --strict on the package (config in pyproject.toml; generated tables excluded),
# and rustfmt, clippy and the unit tests of the native workspace (native/: the core crate and its binding).
lint: $(INSTALLED)
	$(VENV)/bin/ruff check shardconv bench
	$(VENV)/bin/mypy
	cd native && cargo fmt --all --check
	cd native && cargo clippy --workspace --all-targets -- -D warnings
	cd native && cargo test --workspace -q

# The VS Code extension (editors/vscode), packaged as editors/vscode/shardconv.vsix; it runs `shardconv server`.
vscode:
	cd editors/vscode && npm install --no-audit --no-fund && npx --yes @vscode/vsce package --skip-license -o shardconv.vsix

# An abi3 wheel (one per platform, any CPython >= 3.10) into dist/.
wheel: $(PY)
	$(PIP) install 'maturin>=1.5,<2'
	$(VENV)/bin/maturin build --release --out dist

# Headless Chromium, which the HTML explanation's test opens its page in: Debian's package when missing.
# A system install, so never part of `make test`: run it once (as root); .ci/run calls it before the tests.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
		{ echo "make test needs Chromium: install Debian's chromium package"; exit 1; }

# The whole gate: lint, then every test, the suite spread over the machine's cores (pytest-xdist; a worker
# that runs out of tests takes queued ones from the other, so one long test does not leave a core idle).
JOBS ?= auto
XDIST = -n $(JOBS) --dist worksteal
test: lint
	PYTHONHASHSEED=0 $(PY) -m pytest -q $(XDIST)

# The edit-test loop: the same suite without the tests marked slow, on every core, with no lint or rebuild
# (run `make test` or `pip install -e .` after editing native/).
test-fast: $(PY)
	@$(PY) -c "import xdist, shardconv._native" 2>/dev/null || $(PIP) install -e '.[test]'
	PYTHONHASHSEED=0 $(PY) -m pytest -q $(XDIST) -m "not slow"

# Times a whole run and rewrites tests/slow_tests.txt, the tests test-fast leaves out.
slow-list: $(PY)
	PYTHONHASHSEED=0 $(PY) -m pytest -q $(XDIST) --write-slow-list

# The long profile (tests/support/explore.py): the fuzzers, the harness's programs, and every other property
# test with fresh draws, ten times its cases.
fuzz: $(INSTALLED)
	$(PIP) install -e '.[test,fuzz]' || echo "atheris did not install: hypothesis drives the coverage fuzzer"
	SHARDCONV_FUZZ=long $(PY) -m pytest -q tests/fuzz
	SHARDCONV_FUZZ=long $(PY) -m pytest -q tests/harness
	SHARDCONV_FUZZ=long $(PY) -m pytest -q $(XDIST) -m hypothesis tests --ignore=tests/fuzz --ignore=tests/harness
	@if $(PY) -c "import atheris" 2>/dev/null; then \
		cd tests/fuzz && ../../$(PY) atheris_main.py -max_total_time=$${SHARDCONV_ATHERIS_SECONDS:-600} -rss_limit_mb=4096; \
	else echo "atheris is not installed here: the hypothesis coverage profile above stands in for it"; fi

bench: $(INSTALLED)
	$(PY) bench/convert.py
	$(PY) bench/cli.py
	$(PY) bench/examples.py
	$(PY) bench/scan.py
	$(PY) bench/passes.py
	$(PY) bench/memory.py
	$(PY) bench/hardening.py

# Regenerate the prebuilt parsers (shardconv/formats/_lark_runtime.py, _tables_*.py) after editing
# shardconv/formats/grammars/*.lark, with the Lark pinned in the dev extra; `make test` fails until then.
grammars: $(PY)
	$(PIP) install -e '.[dev]'
	PYTHONHASHSEED=0 $(PY) -m shardconv.formats.generate

# Older jaxlibs as extra oracles (docs/releases.md), each in its own venv under build/, never in $(VENV):
# shardconv's --xla-version printers must match each release's own printer. Not part of `make test`.
OLD_JAXLIBS ?= 0.9.1 0.9.2
OLD_ORACLES := build/oracles-old
oracles-old: $(INSTALLED)
	for v in $(OLD_JAXLIBS); do \
		test -x $(OLD_ORACLES)/venv-$$v/bin/python || { $(PYTHON) -m venv $(OLD_ORACLES)/venv-$$v && \
		$(OLD_ORACLES)/venv-$$v/bin/python -m pip -q --disable-pip-version-check install "jax==$$v" "jaxlib==$$v"; } || exit 1; \
	done
	SHARDCONV_OLD_ORACLES="$(foreach v,$(OLD_JAXLIBS),$(v)=$(OLD_ORACLES)/venv-$(v)/bin/python)" PYTHONHASHSEED=0 \
		$(PY) -m pytest -q tests/releases/oracles_old.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis native/target shardconv/_native*.so shardconv/_native*.pyd

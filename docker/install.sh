#!/usr/bin/env bash
# Installs what `make test-compose` needs to run compose.yaml under a real Docker engine, none of
# it from an image registry (none is reachable from the test machines):
#
# - Debian's Docker Engine 20.10 (docker.io: dockerd, containerd, runc, and the docker CLI),
#   linked as $PROXYBENCH_CACHE/bin/{dockerd,docker} so a newer docker client elsewhere on PATH
#   is never the one used;
# - mmdebstrap, which makes the base images from Debian's packages (base-images.sh);
# - the Compose v2 CLI plugin, built from the Go module proxy at a pinned version whose module
#   hash is checked (the checksum database checks it too), into $PROXYBENCH_CACHE/docker/
#   cli-plugins, where engine.sh's DOCKER_CONFIG makes `docker compose` find it. v2.28 speaks the
#   engine's API 1.41 (it negotiates down to the daemon's version).
#
# Idempotent: returns at once when everything is there at its pin.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../proxies/apt-pinned.sh

DOCKER_DEB_VERSION="${DOCKER_DEB_VERSION:-20.10.24+dfsg1-1+deb12u1+b6}"
MMDEBSTRAP_DEB_VERSION="${MMDEBSTRAP_DEB_VERSION:-1.3.5-7}"
COMPOSE_VERSION="${COMPOSE_VERSION:-v2.28.1}"
COMPOSE_MODULE_SUM="${COMPOSE_MODULE_SUM:-h1:ORPfiVHrpnRQBDoC3F8JJyWAY8N5gWuo3FgwyivxFdM=}"
compose_module=github.com/docker/compose/v2

if pins_mode; then
  apt_install_pinned dockerd "docker.io=$DOCKER_DEB_VERSION"
  apt_install_pinned mmdebstrap "mmdebstrap=$MMDEBSTRAP_DEB_VERSION"
  pins_go_module "$compose_module" "$COMPOSE_VERSION"
  exit 0
fi

APT_PIDFILES="/run/docker.pid /run/containerd/containerd.pid" apt_install_pinned dockerd "docker.io=$DOCKER_DEB_VERSION"
apt_install_pinned docker "docker.io=$DOCKER_DEB_VERSION"
apt_install_pinned mmdebstrap "mmdebstrap=$MMDEBSTRAP_DEB_VERSION"

plugin="$PROXYBENCH_CACHE/docker/cli-plugins/docker-compose"
if [ -x "$plugin" ] && [ "$(cat "$plugin.version" 2>/dev/null)" = "$COMPOSE_VERSION $COMPOSE_MODULE_SUM" ]; then
  exit 0
fi
command -v go >/dev/null || { echo "install: the compose plugin is built from source and needs Go on PATH" >&2; exit 1; }
pins_go_verified "$compose_module" "$COMPOSE_VERSION" "$COMPOSE_MODULE_SUM" \
  "COMPOSE_VERSION and COMPOSE_MODULE_SUM in docker/install.sh" || exit 1
echo "install: building docker compose $COMPOSE_VERSION from the Go module proxy" >&2
gobin="$(mktemp -d)"
trap 'rm -rf "$gobin"' EXIT
(cd / && GOBIN="$gobin" CGO_ENABLED=0 GOFLAGS=-mod=mod go install -trimpath \
  -ldflags "-s -w -X $compose_module/internal.Version=$COMPOSE_VERSION" "$compose_module/cmd@$COMPOSE_VERSION")
mkdir -p "$(dirname "$plugin")"
mv -f "$gobin/cmd" "$plugin"
echo "$COMPOSE_VERSION $COMPOSE_MODULE_SUM" >"$plugin.version"
pins_record docker-compose "docker compose $COMPOSE_VERSION from the Go module proxy ($COMPOSE_MODULE_SUM)"

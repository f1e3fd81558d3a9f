#!/usr/bin/env bash
# Installs Caddy from Debian (bookworm).
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../apt-pinned.sh

CADDY_DEB_VERSION="${CADDY_DEB_VERSION:-2.6.2-5}"

# the package's service writes no pid file; policy-rc.d keeps it from starting
APT_PIDFILES="" apt_install_pinned caddy \
  "caddy=$CADDY_DEB_VERSION"

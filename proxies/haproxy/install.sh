#!/usr/bin/env bash
# Installs HAProxy from Debian (bookworm).
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../apt-pinned.sh

HAPROXY_DEB_VERSION="${HAPROXY_DEB_VERSION:-2.6.12-1+deb12u4}"

APT_PIDFILES="/run/haproxy.pid" apt_install_pinned haproxy \
  "haproxy=$HAPROXY_DEB_VERSION"

#!/usr/bin/env bash
# Installs nginx from Debian (bookworm). The `nginx` package holds the binary
# with http_ssl, http_v2 and the proxy/upstream keepalive modules built in;
# nginx-light/-core/-full only add dynamic modules we do not use.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../apt-pinned.sh

NGINX_DEB_VERSION="${NGINX_DEB_VERSION:-1.22.1-9+deb12u11}"

APT_PIDFILES="/run/nginx.pid" apt_install_pinned nginx \
  "nginx-common=$NGINX_DEB_VERSION" "nginx=$NGINX_DEB_VERSION"

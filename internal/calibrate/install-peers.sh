#!/usr/bin/env bash
# Installs the native clients `make calibrate` measures k6 against: wrk (HTTP/1.1) and h2load
# (HTTP/1.1 and HTTP/2, from nghttp2-client), Debian's packages, pinned by version with the rules
# of proxies/apt-pinned.sh. Debian 12's h2load is built without HTTP/3: there is no native h3
# client to install here. Idempotent.
set -euo pipefail
cd "$(dirname "$0")"

WRK_VERSION="${WRK_VERSION:-4.1.0-3+b2}"
NGHTTP2_VERSION="${NGHTTP2_VERSION:-1.52.0-1+deb12u3}"

if ! command -v apt-get >/dev/null; then
	echo "install-peers: no apt-get: install wrk $WRK_VERSION and h2load (nghttp2-client $NGHTTP2_VERSION) yourself" >&2
	exit 1
fi
# shellcheck source=../../proxies/apt-pinned.sh
. ../../proxies/apt-pinned.sh

APT_PIDFILES="" apt_install_pinned wrk "wrk=$WRK_VERSION"
APT_PIDFILES="" apt_install_pinned h2load "nghttp2-client=$NGHTTP2_VERSION"

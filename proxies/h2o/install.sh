#!/usr/bin/env bash
# Installs h2o from Debian (bookworm): 2.2.5, the last 2.2 release. The
# package's service is kept from starting (see apt-pinned.sh).
set -euo pipefail
cd "$(dirname "$0")"
. ../apt-pinned.sh

H2O_DEB_VERSION="${H2O_DEB_VERSION:-2.2.5+dfsg2-7}"

APT_PIDFILES="/run/h2o.pid" apt_install_pinned h2o \
  "h2o=$H2O_DEB_VERSION"

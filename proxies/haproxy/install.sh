#!/usr/bin/env bash
# Builds HAProxy with QUIC (HTTP/3) as $PROXYBENCH_CACHE/bin/haproxy-quic from
# Debian 13's source package (bookworm's HAProxy 2.6 is built without QUIC).
# Compiled with bookworm's toolchain, OpenSSL 3.0 and PCRE2, with Debian's
# patches and Debian's build options, except those that need more libraries
# (Lua, OpenTracing, systemd, jemalloc: bookworm's 2.6 has no jemalloc
# either). OpenSSL 3.0 has no QUIC API: USE_QUIC_OPENSSL_COMPAT=1 (as Debian 13
# builds it too) and the config's "limited-quic" enable HAProxy's own layer.
# Idempotent: returns at once when the binary was built from the same version
# and options.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../deb-source.sh

# The revision this script was written against and its source files (sha256
# from its .dsc): fetched by pool path and checked here, so a revision the
# index no longer lists still builds. HAPROXY_SRC_VERSION asks for another
# revision (see ../deb-source.sh for what is taken when it cannot be had).
HAPROXY_SRC_PIN=3.0.11-1+deb13u3
HAPROXY_SRC_FILES=(
  "11e6fc6750be89dbe61e9ab2b338254957a2724d1f2b5d0b9ea707556a9ebb1f haproxy_3.0.11-1+deb13u3.dsc"
  "a133e2d550c5fd9a849b5c7ab17bb945bcdad209ca140d41f45ebf31943ae783 haproxy_3.0.11.orig.tar.gz"
  "3c038b0a9f488a846d723aed4cc24f36b12c3cb846deece50e506386a8dbe6b7 haproxy_3.0.11-1+deb13u3.debian.tar.xz"
)
HAPROXY_SRC_VERSION="${HAPROXY_SRC_VERSION:-$HAPROXY_SRC_PIN}"
if pins_mode; then
  deb_source_pins haproxy "$HAPROXY_SRC_VERSION" "$HAPROXY_SRC_PIN" "${HAPROXY_SRC_FILES[@]}"
  exit 0
fi

build="$PROXYBENCH_CACHE/build/haproxy-$HAPROXY_SRC_VERSION"
options=(
  TARGET=linux-glibc
  USE_OPENSSL=1 USE_QUIC=1 USE_QUIC_OPENSSL_COMPAT=1
  USE_PCRE2=1 USE_PCRE2_JIT=1 USE_SLZ=1 USE_PROMEX=1
)
cflags="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
cflags="${cflags//-ffile-prefix-map=$PWD=./-ffile-prefix-map=$build=.}"
ldflags="$(dpkg-buildflags --get LDFLAGS)"
stamp="$HAPROXY_SRC_VERSION ${options[*]} $cflags $ldflags"

if deb_build_current haproxy-quic "$stamp"; then exit 0; fi

deb_build_deps build-essential dpkg-dev libssl-dev libpcre2-dev libcrypt-dev
deb_source_tree haproxy "$HAPROXY_SRC_VERSION" "$HAPROXY_SRC_PIN" "$build" "${HAPROXY_SRC_FILES[@]}"
cd "$build"
make -j"$(nproc)" "${options[@]}" CFLAGS="$cflags" LDFLAGS="$ldflags" \
  IGNOREGIT=true VERSION="${DEB_SOURCE_REVISION%-*}" SUBVERS="-${DEB_SOURCE_REVISION##*-}" \
  >make.log 2>&1 || { tail -n 30 make.log >&2; exit 1; }
deb_build_install haproxy-quic haproxy "$stamp"
pins_record haproxy "haproxy $DEB_SOURCE_REVISION from Debian's source package ($DEB_SOURCE_HOW)"
"$PROXYBENCH_CACHE/bin/haproxy-quic" -v | sed -n 1p >&2

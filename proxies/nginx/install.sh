#!/usr/bin/env bash
# Builds nginx with HTTP/3 (QUIC) as $PROXYBENCH_CACHE/bin/nginx-quic from
# Debian 13's source package (bookworm's nginx 1.22 has no http_v3; 1.25+
# has, and works with bookworm's OpenSSL 3.0 through its own QUIC layer).
# Compiled with bookworm's toolchain, OpenSSL, PCRE2 and zlib, with Debian's
# patches and the core of Debian's configure flags (its `nginx` package's
# built-in modules; none of the dynamic ones). Idempotent: returns at once when
# the binary was built from the same version and flags.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source-path=SCRIPTDIR
. ../deb-source.sh

# The revision this script was written against and its source files (sha256
# from its .dsc): fetched by pool path and checked here, so a revision the
# index no longer lists still builds. NGINX_SRC_VERSION asks for another
# revision (see ../deb-source.sh for what is taken when it cannot be had).
NGINX_SRC_PIN=1.26.3-3+deb13u7
NGINX_SRC_FILES=(
  "12ea342366d81030e59e3a0ac9591ca549f5da023d85055f0a25d99e68378381 nginx_1.26.3-3+deb13u7.dsc"
  "69ee2b237744036e61d24b836668aad3040dda461fe6f570f1787eab570c75aa nginx_1.26.3.orig.tar.gz"
  "faa36c1c57af475445b2a50d203fea314ed1db6a3399ed95c79ae7e99478a9f3 nginx_1.26.3.orig.tar.gz.asc"
  "19fcf637728c01356f4c80909812b32bc38d6f10eabc1e7fa2bb2c6fbcf27474 nginx_1.26.3-3+deb13u7.debian.tar.xz"
)
NGINX_SRC_VERSION="${NGINX_SRC_VERSION:-$NGINX_SRC_PIN}"
if pins_mode; then
  deb_source_pins nginx "$NGINX_SRC_VERSION" "$NGINX_SRC_PIN" "${NGINX_SRC_FILES[@]}"
  exit 0
fi

build="$PROXYBENCH_CACHE/build/nginx-$NGINX_SRC_VERSION"
cflags="$(dpkg-buildflags --get CFLAGS) -fPIC $(dpkg-buildflags --get CPPFLAGS)"
ldflags="$(dpkg-buildflags --get LDFLAGS) -Wl,-z,now -fPIC"
# Debian's basic_configure_flags (debian/rules), paths moved out of /etc,
# /var and /run: the stack always passes -p RunDir and -c, and the config sets
# the pid file and every temp path
configure=(
  --prefix="$PROXYBENCH_CACHE/nginx-quic"
  --error-log-path=stderr
  --with-compat --with-debug --with-pcre-jit --with-threads
  --with-http_ssl_module --with-http_v2_module --with-http_v3_module
  --with-http_stub_status_module --with-http_realip_module
  --with-http_auth_request_module --with-http_dav_module --with-http_slice_module
)
# dpkg-buildflags maps the current directory to "." in debug info: the build's
cflags="${cflags//-ffile-prefix-map=$PWD=./-ffile-prefix-map=$build=.}"
stamp="$NGINX_SRC_VERSION ${configure[*]} $cflags $ldflags"

if deb_build_current nginx-quic "$stamp"; then exit 0; fi

deb_build_deps build-essential dpkg-dev libssl-dev libpcre2-dev zlib1g-dev
deb_source_tree nginx "$NGINX_SRC_VERSION" "$NGINX_SRC_PIN" "$build" "${NGINX_SRC_FILES[@]}"
cd "$build"
./configure --with-cc-opt="$cflags" --with-ld-opt="$ldflags" "${configure[@]}" >configure.log 2>&1 ||
  { tail -n 30 configure.log >&2; exit 1; }
make -j"$(nproc)" >make.log 2>&1 || { tail -n 30 make.log >&2; exit 1; }
deb_build_install nginx-quic objs/nginx "$stamp"
pins_record nginx "nginx $DEB_SOURCE_REVISION from Debian's source package ($DEB_SOURCE_HOW)"
"$PROXYBENCH_CACHE/bin/nginx-quic" -V 2>&1 | sed -n 1p >&2

#!/usr/bin/env bash
# The compose k6 service's entry point: bin/k6 with its arguments, as `k6` in k6's own image.
#
#   docker compose run --rm k6 run scenarios/sse.js
#
# While InfluxDB answers on INFLUXDB_ADDR (the compose observe profile, or a native `make
# observe-up`: host networking reaches both), the run streams into it through our output, as
# `make k6` does; K6_OUT set by the caller wins.
#
# Every run takes the stack's testid, which the direct service writes when the stack comes up
# (run/compose/testid), so that runs against several targets, one `docker compose run` each,
# fill one comparison dashboard and one results/<testid>/; TESTID set by the caller wins, and
# without a stack's testid each run makes its own.
#
# PROXYBENCH_TARGET_BY_NAME=1 (compose.bridge.yaml): the targets are other containers, not this
# one's 127.0.0.1. The scenarios send the hostname (bench.test) to the targets file's "address"
# through k6's `hosts` option; a copy of the file gives the address of the service TARGET names,
# so SNI and :authority stay bench.test and the certificate verifies.
set -euo pipefail
addr="${INFLUXDB_ADDR:-127.0.0.1:8086}"
if [ -z "${K6_OUT:-}" ] && [ "${1:-}" = run ] && (exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}") 2>/dev/null; then
  export K6_OUT=proxybench-influxdb K6_INFLUXDB_ADDR="http://$addr" K6_INFLUXDB_BUCKET="${K6_INFLUXDB_BUCKET:-k6}"
  echo "k6: streaming into InfluxDB at $addr (database $K6_INFLUXDB_BUCKET)" >&2
fi

if [ "${1:-}" = run ] && [ "${PROXYBENCH_TARGET_BY_NAME:-}" = 1 ] && [ -z "${TARGET_URL:-}" ]; then
  service="${TARGET:-direct}"
  ip="$(getent ahostsv4 "$service" | head -n 1 | cut -d ' ' -f 1)" || true
  if [ -z "$ip" ]; then
    echo "k6: TARGET=$service: no service of that name on this network (is the stack up, with that target?)" >&2
    exit 1
  fi
  src="${TARGETS_FILE:-targets.json}"
  byname="$(mktemp --suffix=.json)"
  # "upstream" emptied: the upstream's own origin is bench.test:9000 too, which `hosts` now
  # sends to the target's container, not to direct's; json.js then skips its check of the
  # upstream's own body (checked by every run on the host network)
  sed -zE -e 's/"address"[[:space:]]*:[[:space:]]*"[^"]*"/"address": "'"$ip"'"/' \
    -e 's/"upstream"[[:space:]]*:[[:space:]]*\{[^}]*\}/"upstream": {}/' "$src" >"$byname"
  if ! grep -q "\"address\": \"$ip\"" "$byname"; then
    echo "k6: PROXYBENCH_TARGET_BY_NAME: $src has no \"address\" to replace with $service's ($ip)" >&2
    exit 1
  fi
  export TARGETS_FILE="$byname"
  echo "k6: TARGET=$service: bench.test is $ip (the $service service)" >&2
fi

if [ "${1:-}" = run ]; then
  stackid="${PROXYBENCH_RUN:-run}/compose/testid"
  if [ -z "${TESTID:-}" ] && [ -s "$stackid" ]; then
    TESTID="$(head -n 1 "$stackid")"
    echo "k6: testid $TESTID (the stack's, from run/compose/testid: TESTID=… for another)" >&2
  fi
  export TESTID="${TESTID:-k6-$(date +%Y%m%d-%H%M%S)}"
  # the result JSON lands in results/<testid>/ (mounted from the host), as with `make k6`: k6
  # itself cannot create the directory
  if [ -z "${SUMMARY_JSON:-}" ]; then
    mkdir -p "results/$TESTID"
  fi
fi
exec bin/k6 "$@"

#!/usr/bin/env bash
# The compose k6 service's entry point: bin/k6 with its arguments, as `k6` in k6's own image.
#
#   docker compose run --rm k6 run scenarios/sse.js
#
# While InfluxDB answers on INFLUXDB_ADDR (the compose observe profile, or a native `make
# observe-up`: host networking reaches both), the run streams into it through our output, as
# `make k6` does; K6_OUT set by the caller wins.
set -euo pipefail
addr="${INFLUXDB_ADDR:-127.0.0.1:8086}"
if [ -z "${K6_OUT:-}" ] && [ "${1:-}" = run ] && (exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}") 2>/dev/null; then
  export K6_OUT=proxybench-influxdb K6_INFLUXDB_ADDR="http://$addr" K6_INFLUXDB_BUCKET="${K6_INFLUXDB_BUCKET:-k6}"
  echo "k6: streaming into InfluxDB at $addr (database $K6_INFLUXDB_BUCKET)" >&2
fi
# the result JSON lands in results/<testid>/ (mounted from the host), as with `make k6`: k6
# itself cannot create the directory
if [ "${1:-}" = run ] && [ -z "${SUMMARY_JSON:-}" ]; then
  export TESTID="${TESTID:-k6-$(date +%Y%m%d-%H%M%S)}"
  mkdir -p "results/$TESTID"
fi
exec bin/k6 "$@"

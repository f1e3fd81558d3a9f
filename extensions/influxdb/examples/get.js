// A few seconds of GET / against the upstream, streamed into InfluxDB by proxybench-influxdb.
//
//   bin/upstream -h1c 127.0.0.1:9000 &          # or `make up`
//   make observe-up                             # InfluxDB on 127.0.0.1:8086, database k6
//   K6_NO_USAGE_REPORT=true K6_AUTO_EXTENSION_RESOLUTION=false \
//     bin/k6 run --out proxybench-influxdb extensions/influxdb/examples/get.js
import http from 'k6/http';
import { check } from 'k6';

const BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:9000';

export const options = {
  vus: 4,
  duration: '5s',
  // the tags the aggregated points keep (K6_INFLUXDB_AGGREGATE_TAGS): low cardinality only
  tags: { testid: __ENV.TESTID || 'example', target: 'direct', mode: 'reused' },
};

export function setup() {
  const r = http.get(`${BASE_URL}/healthz`);
  if (r.status !== 200) {
    throw new Error(`the upstream does not answer at ${BASE_URL} (status ${r.status}): start it, or set BASE_URL`);
  }
}

export default function () {
  const r = http.get(`${BASE_URL}/`, { tags: { route: '/' } });
  check(r, { '200, 4096 bytes': (res) => res.status === 200 && res.body.length === 4096 });
}

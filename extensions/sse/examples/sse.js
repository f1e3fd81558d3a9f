// k6/x/proxybench/sse: time to the first Server-Sent Event, gaps between events, and time
// to the first chunk of a streamed body — what k6/http can't see, since it
// returns only once the whole body is read.
//
//   K6_NO_USAGE_REPORT=true K6_AUTO_EXTENSION_RESOLUTION=false \
//     ./bin/k6 run -e BASE_URL=http://127.0.0.1:9000 extensions/sse/examples/sse.js
//
// BASE_URL is any server with the upstream's /sse and /stream routes (the
// upstream itself, or a proxy in front of it). A proxy that buffers the body
// sends the headers at once but every event at the end: the "not buffered"
// checks then fail, and so does the run.
import { check } from 'k6';
import sse from 'k6/x/proxybench/sse';

const BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:9000';
const COUNT = 3;
const INTERVAL_MS = 200;
const CHUNKS = 4;
const CHUNK_BYTES = 1024;

export const options = {
  iterations: 3,
  thresholds: {
    checks: ['rate==1'],
    // streamed, the first event/chunk comes long before the next interval;
    // buffered, it comes with the last one
    sse_first_event: [`p(95)<${INTERVAL_MS}`],
    sse_event_gap: [`p(95)<${INTERVAL_MS * 2}`],
    stream_first_chunk: [`p(95)<${INTERVAL_MS}`],
  },
};

export default function () {
  const res = sse.get(`${BASE_URL}/sse?count=${COUNT}&interval_ms=${INTERVAL_MS}`, {
    tags: { route: '/sse' },
    timeout: '10s',
  });
  check(res, {
    'sse: status 200': (r) => r.status === 200,
    'sse: every event': (r) => r.events.length === COUNT && r.events.every((e) => e.event === 'tick'),
    // streamed: the first event comes ~2 intervals before the end
    'sse: not buffered': (r) => r.first_event_ms !== null && r.duration_ms - r.first_event_ms > INTERVAL_MS,
  });

  const st = sse.stream(
    `${BASE_URL}/stream?chunks=${CHUNKS}&chunk_bytes=${CHUNK_BYTES}&interval_ms=${INTERVAL_MS}`,
    { tags: { route: '/stream' }, timeout: '10s' },
  );
  check(st, {
    'stream: status 200': (r) => r.status === 200,
    'stream: every byte': (r) => r.bytes === CHUNKS * CHUNK_BYTES,
    'stream: not buffered': (r) => r.first_chunk_ms !== null && r.duration_ms - r.first_chunk_ms > INTERVAL_MS,
  });

  if (__ITER === 0) {
    console.log(`sse: first_byte=${res.first_byte_ms.toFixed(1)}ms first_event=${res.first_event_ms.toFixed(1)}ms ` +
      `gaps=${res.gaps_ms.map((g) => g.toFixed(0)).join(',')}ms total=${res.duration_ms.toFixed(0)}ms ${res.proto}`);
    console.log(`stream: first_chunk=${st.first_chunk_ms.toFixed(1)}ms reads=${st.chunks_ms.length} ` +
      `bytes=${st.bytes} total=${st.duration_ms.toFixed(0)}ms`);
  }
}

// Configuration from __ENV. Every default runs as it is (the smoke profile against the direct
// target); a value that can't be used stops the test before it starts, with a message naming
// the variable.
import { DEFAULT_PROFILE, profile } from './profiles.js';
import { protocol } from './protocols.js';
import { entry } from './catalogue.js';
import { clientFor } from './client.js';
import { chosenTarget, origin } from './targets.js';

const DURATION_RE = /^(\d+(\.\d+)?(ms|s|m|h))+$/;
const DURATION_UNITS = { ms: 0.001, s: 1, m: 60, h: 3600 };
const TESTID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

// UPLOAD_BYTES default: 256 KiB, as the reference harness.
export const DEFAULT_UPLOAD_BYTES = 262144;

function env(name) {
  const v = __ENV[name];
  return v === undefined || v === '' ? undefined : String(v).trim();
}

// seconds parses a k6 duration ("10s", "1m30s", "500ms"; "0" for none) into seconds.
export function seconds(name, value, { allowZero = false } = {}) {
  const v = String(value).trim();
  if (allowZero && /^0+(ms|s|m|h)?$/.test(v)) {
    return 0;
  }
  if (!DURATION_RE.test(v)) {
    throw new Error(`${name} must be a duration such as 10s, 1m30s or 500ms, got "${value}"`);
  }
  let total = 0;
  for (const [, n, , unit] of v.matchAll(/(\d+(\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(n) * DURATION_UNITS[unit];
  }
  if (total <= 0 && !allowZero) {
    throw new Error(`${name} must be longer than zero, got "${value}"`);
  }
  return total;
}

// positiveInt parses a whole number ≥ 1.
export function positiveInt(name, value) {
  const v = String(value).trim();
  if (!/^\d+$/.test(v) || Number(v) < 1 || !Number.isSafeInteger(Number(v))) {
    throw new Error(`${name} must be a whole number of at least 1, got "${value}"`);
  }
  return Number(v);
}

function pad(n) {
  return String(n).padStart(2, '0');
}

// stamp is the local time as yyyymmdd-hhmmss, as `date +%Y%m%d-%H%M%S` prints it.
function stamp(d = new Date()) {
  return (
    `${d.getFullYear()}${pad(d.getMonth() + 1)}${pad(d.getDate())}-` +
    `${pad(d.getHours())}${pad(d.getMinutes())}${pad(d.getSeconds())}`
  );
}

// loadConfig reads the environment for one script; its mode, route and protocols come from the
// catalogue (catalogue.js). The measured k6 scenario (cfg.k6Scenario) is the script's name, with
// the protocol added for a scenario of several protocols (json-h1c): k6's proto tag says HTTP/1.1
// for h1 and h1c alike, and the scenario tag is what tells them apart in InfluxDB.
//   websocket: the measured URL is ws:// or wss:// (cfg.origin stays http(s) for setup's probe)
//   client: what sends the measured requests, said in every result: k6/http, k6/x/proxybench/http3
//     (the default for the protocol) or native (k6/x/proxybench/load, scenarios/native/)
export function loadConfig({ scenario, websocket = false, client }) {
  const { mode, route, protos, defaultProto, protoNote } = entry(scenario);
  const profileName = env('PROFILE') || DEFAULT_PROFILE;
  const p = profile(profileName);

  let protoName = protos[0];
  const several = protos.length > 1;
  if (several) {
    protoName = env('PROTO') || defaultProto;
    if (!protos.includes(protoName)) {
      const note = protoNote ? ` (${protoNote})` : '';
      throw new Error(`unknown PROTO "${protoName}" for ${scenario}: it runs over ${protos.join(', ')}${note}`);
    }
  }
  const pr = protocol(protoName);
  const t = chosenTarget(env('TARGET'));

  const duration = env('DURATION') || p.duration;
  const warmup = env('WARMUP') || p.warmup;
  const freshDuration = env('FRESH_DURATION') || p.freshDuration;
  const connections = positiveInt('CONNECTIONS', env('CONNECTIONS') || p.connections);

  const testid = env('TESTID') || `${scenario}-${stamp()}`;
  if (!TESTID_RE.test(testid)) {
    throw new Error(`TESTID must be letters, digits, ".", "_" or "-" (it names a directory), got "${testid}"`);
  }

  const cfg = {
    scenario,
    k6Scenario: several ? `${scenario}-${protoName}` : scenario,
    mode,
    route,
    proto: pr,
    client: client || (pr.quic ? 'k6/x/proxybench/http3' : 'k6/http'),
    // what sends a request through the protocol, resolved now: an extension can only be
    // loaded in the init context
    http: clientFor(pr),
    target: t,
    profile: profileName,
    testid, // the init-time value: read the test's own from exec.test.options.tags (summary.js)
    duration,
    durationS: seconds('DURATION', duration),
    // a sweep's run (make bench MODES=idle, connections, bodies): its place on the sweep, a tag
    // of its points so that the comparison's dashboards leave them out of the matrix's cells
    point: env('SWEEP_POINT') || '',
    warmup,
    warmupS: seconds('WARMUP', warmup, { allowZero: true }),
    connections,
    streams: positiveInt('STREAMS', env('STREAMS') || p.streams),
    requests: positiveInt('REQUESTS', env('REQUESTS') || p.requests),
    // the reference harness defaults fresh concurrency to CONNECTIONS
    freshConnections: positiveInt(
      'FRESH_CONNECTIONS',
      env('FRESH_CONNECTIONS') || (env('CONNECTIONS') ? connections : p.freshConnections),
    ),
    freshDuration,
    freshDurationS: seconds('FRESH_DURATION', freshDuration),
    samples: positiveInt('SAMPLES', env('SAMPLES') || p.samples),
    uploadBytes: positiveInt('UPLOAD_BYTES', env('UPLOAD_BYTES') || DEFAULT_UPLOAD_BYTES),
    summaryJson: env('SUMMARY_JSON'),
    pwd: env('PWD'),
  };
  cfg.origin = origin(t, pr);
  cfg.url = (websocket ? origin(t, pr, pr.ws) : cfg.origin) + route;
  return cfg;
}

// Load profiles, from the reference harness (GoDoxy's scripts/benchmark.sh): smoke for a quick
// look, stable for numbers worth comparing, stress to find limits. Every field can be overridden
// by its environment variable (see config.js). "runs" is not here: repeating a run is the
// runner's job, one k6 process measures one run.
export const PROFILES = {
  smoke: {
    duration: '10s',
    warmup: '3s',
    connections: 32,
    streams: 16,
    requests: 2000,
    freshConnections: 32,
    samples: 5,
  },
  stable: {
    duration: '30s',
    warmup: '5s',
    connections: 64,
    streams: 16,
    requests: 20000,
    freshConnections: 64,
    samples: 25,
  },
  stress: {
    duration: '30s',
    warmup: '5s',
    connections: 100,
    streams: 100,
    requests: 50000,
    freshConnections: 100,
    samples: 10,
  },
};

export const DEFAULT_PROFILE = 'smoke';

// profile returns the named profile or throws, listing the ones there are.
export function profile(name) {
  const p = PROFILES[name];
  if (!p) {
    throw new Error(`unknown PROFILE "${name}": profiles are ${Object.keys(PROFILES).join(', ')}`);
  }
  return p;
}

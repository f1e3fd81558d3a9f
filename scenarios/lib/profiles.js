// Load profiles (../catalogue.json, which the Go side reads too), from the reference harness
// (GoDoxy's scripts/benchmark.sh): smoke for a quick look, stable for numbers worth comparing,
// stress to find limits. Every field can be overridden by its environment variable (see
// config.js). "runs" is the runner's: one k6 process measures one run.
import { CATALOGUE } from './catalogue.js';

export const DEFAULT_PROFILE = CATALOGUE.default_profile;

// profile returns the named profile or throws, listing the ones there are.
export function profile(name) {
  const p = CATALOGUE.profiles[name];
  if (!p) {
    throw new Error(`unknown PROFILE "${name}": profiles are ${Object.keys(CATALOGUE.profiles).join(', ')}`);
  }
  return { ...p, freshConnections: p.fresh_connections, freshDuration: p.fresh_duration };
}

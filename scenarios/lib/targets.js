// Targets come from targets.json at the repository root: the single source of truth for the
// hostname, the loopback address and every target's ports. TARGETS_FILE points elsewhere (the
// end-to-end test moves every port); a relative TARGETS_FILE is taken from the current
// directory, as a user typing it expects.
//
// k6's open() resolves relative paths against the main script or the calling module depending
// on where it is called (k6 v2.2 warns that this will change), so every path given to it here
// is absolute: import.meta.resolve() for our own file, $PWD for the user's.

const DEFAULT_FILE = import.meta.resolve('../../targets.json');

function targetsPath(override, pwd) {
  if (!override) {
    return DEFAULT_FILE;
  }
  if (override.startsWith('/') || override.startsWith('file://')) {
    return override;
  }
  if (!pwd) {
    // k6 inspect (and k6 run --include-system-env-vars=false) hide $PWD
    throw new Error(`TARGETS_FILE "${override}" is relative and $PWD is not visible to k6: give an absolute path`);
  }
  return `${pwd.replace(/\/+$/, '')}/${override}`;
}

function readTargets(path) {
  let text;
  try {
    text = open(path);
  } catch (e) {
    throw new Error(`cannot read the targets file ${path}: ${e.message || e}`);
  }
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`the targets file ${path} is not valid JSON: ${e.message}`);
  }
  for (const key of ['hostname', 'address', 'targets']) {
    if (!doc[key]) {
      throw new Error(`the targets file ${path} has no "${key}"`);
    }
  }
  return doc;
}

const PATH = targetsPath(__ENV.TARGETS_FILE, __ENV.PWD).replace(/^file:\/\//, '');
const DOC = readTargets(PATH);

export const TARGETS_PATH = PATH;

// targetNames lists the targets in the file's order.
export function targetNames() {
  return Object.keys(DOC.targets);
}

// target returns what a script needs to reach one target, or throws a message that tells the
// user what to type instead.
export function target(name) {
  const names = targetNames();
  if (name === 'all') {
    throw new Error(
      'TARGET=all: one k6 run measures one target; `make k6 TARGET=all SCENARIO=…` runs every ' +
        `target in turn (targets: ${names.join(', ')})`,
    );
  }
  const ports = DOC.targets[name];
  if (!ports) {
    throw new Error(`unknown TARGET "${name}" in ${PATH}: targets are ${names.join(', ')}`);
  }
  for (const key of ['tls', 'h1c']) {
    if (!Number.isInteger(ports[key]) || ports[key] <= 0 || ports[key] > 65535) {
      throw new Error(`target "${name}" in ${PATH} has no valid "${key}" port`);
    }
  }
  return {
    name,
    host: DOC.hostname,
    address: DOC.address,
    tlsPort: ports.tls,
    h1cPort: ports.h1c,
    uploadLimit: DOC.upload_limit_bytes || 0,
  };
}

// upstreamOrigin is the upstream's own cleartext origin (the file's "upstream" h1c port), where
// a probe reads what the upstream itself answers, or null when the file names none.
export function upstreamOrigin() {
  const port = DOC.upstream && DOC.upstream.h1c;
  return Number.isInteger(port) ? `http://${DOC.hostname}:${port}` : null;
}

// origin is scheme://host:port for a protocol: the hostname stays in the URL so that SNI and
// Host (:authority) carry it; k6's `hosts` option sends the connection to the address.
export function origin(t, proto, scheme = proto.scheme) {
  return `${scheme}://${t.host}:${proto.tls ? t.tlsPort : t.h1cPort}`;
}

// hosts is k6's `hosts` option: the hostname resolves to the loopback address.
export function hosts(t) {
  return { [t.host]: t.address };
}

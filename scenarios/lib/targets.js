// Where a script sends its requests. Two kinds of target:
//   - a target of the local stack, by name (TARGET=nginx): targets.json at the repository root is
//     the single source of truth for the hostname, the loopback address and every target's
//     ports, and k6's `hosts` option sends the hostname to the loopback address. TARGETS_FILE
//     points elsewhere (the end-to-end test moves every port); a relative TARGETS_FILE is taken
//     from the current directory, as a user typing it expects;
//   - a remote target, by URL (TARGET_URL=https://proxy.example:8443): the proxy on another
//     machine, or anything not started by this repository. Its name resolves as any other (no
//     `hosts` mapping) and targets.json is not read, so a script run by k6 cloud or on a
//     Kubernetes runner needs no file of this clone. TARGET names it in results (default: its
//     host).
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
    throw new Error(`cannot read the targets file ${path}: ${e.message || e}`, { cause: e });
  }
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`the targets file ${path} is not valid JSON: ${e.message}`, { cause: e });
  }
  for (const key of ['hostname', 'address', 'targets']) {
    if (!doc[key]) {
      throw new Error(`the targets file ${path} has no "${key}"`);
    }
  }
  return doc;
}

const REMOTE_URL = __ENV.TARGET_URL ? String(__ENV.TARGET_URL).trim() : '';
const PATH = targetsPath(__ENV.TARGETS_FILE, __ENV.PWD).replace(/^file:\/\//, '');
// read in the init context (open() exists only there), and only for the local stack
const DOC = REMOTE_URL ? null : readTargets(PATH);

// targetNames lists the targets in the file's order.
export function targetNames() {
  return Object.keys(DOC.targets);
}

const URL_RE = /^(https?):\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?\/?$/;

// remoteTarget is TARGET_URL as a target. The URL is a base (scheme, host, port): the route is
// the scenario's. Its scheme must be the protocol's (remoteOrigin says so per script).
export function remoteTarget(url, name) {
  const m = URL_RE.exec(url);
  if (!m) {
    throw new Error(
      `TARGET_URL "${url}" is not a base URL such as https://proxy.example:8443 or http://10.0.0.5:8081 ` +
        '(scheme http or https, a host, an optional port, no path)',
    );
  }
  const [, scheme, host, port] = m;
  if (name && !/^[A-Za-z0-9._-]+$/.test(name)) {
    throw new Error(`TARGET "${name}" names a result file: letters, digits, ".", "_" or "-" only`);
  }
  const portNum = port ? Number(port) : scheme === 'https' ? 443 : 80;
  if (portNum < 1 || portNum > 65535) {
    throw new Error(`TARGET_URL "${url}": port ${port} is out of range`);
  }
  return {
    name: name || host.replace(/[[\]]/g, ''),
    remote: { scheme, url: `${scheme}://${host}:${portNum}` },
    host,
    address: host,
    uploadLimit: 0,
  };
}

// chosenTarget is the target the environment names: TARGET_URL, else TARGET (default direct).
export function chosenTarget(name) {
  return REMOTE_URL ? remoteTarget(REMOTE_URL, name) : target(name || 'direct');
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
  if (!DOC) return null; // a remote target's upstream is not ours to reach
  const port = DOC.upstream && DOC.upstream.h1c;
  return Number.isInteger(port) ? `http://${DOC.hostname}:${port}` : null;
}

// origin is scheme://host:port for a protocol: the hostname stays in the URL so that SNI and
// Host (:authority) carry it; k6's `hosts` option sends the connection to the address. A remote
// target's origin is its URL, whose scheme must be the protocol's.
export function origin(t, proto, scheme = proto.scheme) {
  if (t.remote) {
    if (t.remote.scheme !== proto.scheme) {
      throw new Error(
        `TARGET_URL ${t.remote.url} is ${t.remote.scheme}:// and ${proto.name} is ${proto.scheme}://: ` +
          `give the target's ${proto.tls ? 'TLS' : 'cleartext'} listener`,
      );
    }
    return t.remote.url.replace(/^https?/, scheme);
  }
  return `${scheme}://${t.host}:${proto.tls ? t.tlsPort : t.h1cPort}`;
}

// hosts is k6's `hosts` option: the hostname resolves to the loopback address; nothing for a
// remote target.
export function hosts(t) {
  return t.remote ? {} : { [t.host]: t.address };
}

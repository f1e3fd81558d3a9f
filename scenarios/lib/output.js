// Where the result JSON goes. k6's handleSummary writes files but does not create directories
// (k6 v2.2: "could not open …: no such file or directory", and the result is lost), and a
// script has no way to create one. So:
//   - SUMMARY_JSON set (the runner sets it, and creates its directory): written there; if its
//     directory is missing, setup() stops the test before any load, saying so;
//   - otherwise results/<testid>/<file> when that directory exists (make k6 makes it), else
//     <testid>-<file> in the current directory, and the text summary says where it went.
// Whether a directory exists can only be learnt in the init context, with open(): it throws
// "can't be used with directories" for a directory and "no such file" for a missing path.

function absolute(path, pwd) {
  if (path.startsWith('/')) {
    return path;
  }
  return pwd ? `${pwd.replace(/\/+$/, '')}/${path}` : undefined;
}

function dirname(path) {
  const i = path.lastIndexOf('/');
  if (i < 0) return '.';
  return i === 0 ? '/' : path.slice(0, i);
}

// dirState is 'yes', 'no' or 'unknown' (a relative path without $PWD to anchor it).
export function dirState(dir, pwd) {
  const abs = absolute(dir, pwd);
  if (!abs) {
    return 'unknown';
  }
  try {
    open(abs);
    return 'no'; // a file, not a directory
  } catch (e) {
    const msg = String(e && e.message ? e.message : e);
    if (/directories/.test(msg)) return 'yes';
    if (/no such file|not a directory/i.test(msg)) return 'no';
    return 'unknown';
  }
}

// resultFile names a result as the runner names its cells: <k6Scenario>-<target>.json, which
// carries the protocol for a scenario of several (json-h1c-nginx.json).
export function resultFile(cfg) {
  return `${cfg.k6Scenario}-${cfg.target.name}.json`;
}

// planOutput runs in the init context. It returns what setup() and handleSummary need.
export function planOutput(cfg) {
  if (cfg.summaryJson) {
    const dir = dirname(cfg.summaryJson);
    return { explicit: cfg.summaryJson, dir, dirOK: dirState(dir, cfg.pwd) !== 'no' };
  }
  // With TESTID given, results/<testid>/ can exist already; without it the test id is made up
  // now, so its directory can't.
  const given = __ENV.TESTID;
  const defaultDirOK = given ? dirState(`results/${given}`, cfg.pwd) !== 'no' : false;
  return { explicit: undefined, defaultDirOK, givenTestid: given };
}

// assertOutput is called by setup(): fail before the load, not after it.
export function assertOutput(plan) {
  if (plan.explicit && !plan.dirOK) {
    throw new Error(
      `SUMMARY_JSON ${plan.explicit}: directory ${plan.dir} does not exist and k6 cannot create ` +
        `directories: mkdir -p ${plan.dir} first`,
    );
  }
}

// outputPath decides the result's path once the test id is final (handleSummary).
export function outputPath(plan, cfg, testid) {
  if (plan.explicit) {
    if (!plan.dirOK) {
      return { path: undefined, note: `not written: the directory of SUMMARY_JSON ${plan.explicit} does not exist` };
    }
    return { path: plan.explicit };
  }
  const file = resultFile(cfg);
  if (plan.defaultDirOK && plan.givenTestid === testid) {
    return { path: `results/${testid}/${file}` };
  }
  return {
    path: `${testid}-${file}`,
    note: `results/${testid}/ does not exist and k6 cannot create directories (make k6 creates it; or set SUMMARY_JSON)`,
  };
}

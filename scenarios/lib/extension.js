// Our own k6 extensions (k6/x/proxybench/…) exist only in this repository's bin/k6. Scripts load
// them with extension(), not with an import statement: a k6 without one stops at an import
// before any script code runs, saying only "unknown modules", while require() is resolved when
// called, so the script can say what to run instead. A script that always needs one names it
// in a 'use k6 with …' directive, which `k6 deps` lists (it does not follow require()).

// extension returns the module at path (in the init context only) or stops the test, saying
// where the extension is.
export function extension(path) {
  const mod = require(path);
  // k6 hands back an empty object for a module it does not have, and fails the test after init
  if (!mod || Object.keys(mod).length === 0) {
    throw new Error(
      `${path} is one of proxybench's own k6 extensions, compiled into its bin/k6 only: run the ` +
        'script with bin/k6 (make k6-build builds it; make k6 SCENARIO=… runs it), not a stock k6 ' +
        "or k6 cloud's public load zones (k6 cloud run --local-execution with bin/k6 works)",
    );
  }
  return mod;
}

// The unit-test scripts of lib/ (checks_test.js, probes_test.js, native_test.js) name each case
// a check of its own, "case: <name>: …", and print from handleSummary what their Go tests read.
export const CASE = 'case: ';

// caseResults are the cases a run checked and the names of those that failed.
export function caseResults(data) {
  const cases = data.root_group.checks.filter((c) => c.name.startsWith(CASE));
  return {
    cases: cases.length,
    failed: cases.filter((c) => c.fails > 0).map((c) => c.name.slice(CASE.length)),
  };
}

// The catalogue (../catalogue.json): each script's mode, route and protocols, and the load
// profiles. The Go side reads the same file (scenarios/catalogue.go), so adding a scenario is
// one script and one entry there.
export const CATALOGUE = JSON.parse(open('../catalogue.json'));

// entry returns the catalogue's entry for a script, or throws naming the file to edit.
export function entry(scenario) {
  const e = CATALOGUE.scenarios.find((c) => c.scenario === scenario);
  if (!e) {
    throw new Error(`scenario "${scenario}" is not in scenarios/catalogue.json: add its entry there`);
  }
  return { defaultProto: e.default_proto || CATALOGUE.default_proto, protoNote: e.proto_note || '', ...e };
}

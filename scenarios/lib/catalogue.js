// The catalogue (../catalogue.json): each script's mode, route and protocols, and the load
// profiles. The Go side reads the same file (scenarios/catalogue.go), so adding a scenario is
// one script and one entry there.
export const CATALOGUE = JSON.parse(open('../catalogue.json'));

// A scenario without PROTO runs over this one, unless its entry names another.
const DEFAULT_PROTO = 'h2';

// entry returns the catalogue's entry for a script, or throws naming the file to edit.
export function entry(scenario) {
  const e = CATALOGUE.scenarios.find((c) => c.scenario === scenario);
  if (!e) {
    throw new Error(`scenario "${scenario}" is not in scenarios/catalogue.json: add its entry there`);
  }
  return { defaultProto: e.default_proto || DEFAULT_PROTO, protoNote: e.proto_note || '', ...e };
}

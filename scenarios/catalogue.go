// Package scenarios is the catalogue of the k6 scripts in this folder (catalogue.json): each
// scenario's mode, route and protocols, and the load profiles. The scripts read the same file
// (lib/catalogue.js, lib/profiles.js), so a scenario is added with one script and one entry.
package scenarios

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

//go:embed catalogue.json
var catalogueJSON []byte

// Modes of a scenario: its connection pattern, which decides its options and its result's rules.
const (
	Reused    = "reused"
	Fresh     = "fresh"
	Probe     = "probe"
	EqualLoad = "equal-load"
	Idle      = "idle" // connections held idle (idle.js), a mode of its own in a bench
	// Bodies is the body-size sweep's (make bench MODES=bodies): a closed-model run per body
	// size, over each of its protocols.
	Bodies = "bodies"
)

// Scenario is one entry of the catalogue.
type Scenario struct {
	Name   string   `json:"scenario"` // the script's name, scenarios/<name>.js
	Mode   string   `json:"mode"`
	Route  string   `json:"route"`
	Protos []string `json:"protos"` // one for a throughput scenario; a probe runs over each
	// DefaultProto and ProtoNote are read by the scripts only (PROTO's default, and why a
	// protocol is missing from Protos).
	DefaultProto string `json:"default_proto,omitempty"`
	ProtoNote    string `json:"proto_note,omitempty"`
	// What the report shows of a probe, read from here so that a new probe needs no code there:
	// its figure in the latency probes table (none: not in it), the gaps between the parts of a
	// streamed response (the pacing table), and a table of its own.
	Figure  *Figure  `json:"figure,omitempty"`
	Gap     *Trend   `json:"gap,omitempty"`
	Details *Details `json:"details,omitempty"`
}

// Figure is a probe's one figure: the p50 of Trend (an extra trend of its result), or of the
// whole request when Trend is empty. Says is what it times, for the tables' introductions.
type Figure struct {
	Trend string `json:"trend,omitempty"`
	Says  string `json:"says"`
}

// Trend names an extra trend of a probe's result, and says what it times.
type Trend struct {
	Trend string `json:"trend"`
	Says  string `json:"says"`
}

// Details is a probe's own table: per target and protocol, its samples ok and failed, then the
// p50 of each column's extra trend.
type Details struct {
	Title   string   `json:"title"`
	Intro   string   `json:"intro"`
	Columns []Column `json:"columns"`
}

// Column is one figure of a probe's own table.
type Column struct {
	Label string `json:"label"`
	Trend string `json:"trend"`
}

// GapTrend tells the extra trends of the gaps between a streamed probe's parts, whose longest
// is a figure of its own (a stall).
func GapTrend(trend string) bool {
	return slices.ContainsFunc(catalogue.Scenarios, func(s Scenario) bool { return s.Gap != nil && s.Gap.Trend == trend })
}

// A Profile is a named load: the scripts' defaults for their knobs, and the runner's runs.
type Profile struct {
	Duration         string `json:"duration"`
	Warmup           string `json:"warmup"`
	Connections      int    `json:"connections"`
	Streams          int    `json:"streams"`
	Requests         int    `json:"requests"`
	FreshConnections int    `json:"fresh_connections"`
	FreshDuration    string `json:"fresh_duration"` // the native fresh loop's least window
	Samples          int    `json:"samples"`
	Runs             int    `json:"runs"` // of each throughput cell in a bench, when RUNS is not given
	// CapacityProtos are the protocols a bench searches each target's capacity over, when
	// CAPACITY_PROTOS is not given: comma-separated (smoke: h1c alone, for its time).
	CapacityProtos string `json:"capacity_protos"`
}

// catalogueFile is catalogue.json.
type catalogueFile struct {
	DefaultProto   string             `json:"default_proto"` // of a scenario of several protocols, unless its entry names one
	DefaultProfile string             `json:"default_profile"`
	Profiles       map[string]Profile `json:"profiles"`
	Scenarios      []Scenario         `json:"scenarios"`
}

// DefaultProfile is the profile of a run that names none.
func DefaultProfile() string { return catalogue.DefaultProfile }

// ProfileNamed is the named profile, or an error that lists the profiles.
func ProfileNamed(name string) (Profile, error) {
	p, ok := catalogue.Profiles[name]
	if !ok {
		return Profile{}, fmt.Errorf("unknown PROFILE %q: valid profiles are %s", name, strings.Join(ProfileNames(), ", "))
	}
	return p, nil
}

// ProfileNames are the profiles, sorted.
func ProfileNames() []string { return slices.Sorted(maps.Keys(catalogue.Profiles)) }

// Throughput tells a reused or fresh scenario from a probe and the equal-load pass.
func (s Scenario) Throughput() bool { return s.Mode == Reused || s.Mode == Fresh }

// Protocols are the protocols a scenario can name.
var Protocols = []string{"h1", "h1c", "h2", "h3"}

// catalogue is parsed once; the embedded file is checked by TestCatalogue.
var catalogue = func() *catalogueFile {
	c, err := parse(catalogueJSON)
	if err != nil {
		panic(err)
	}
	return c
}()

// All is the catalogue's scenarios, in the order reports list them.
func All() []Scenario { return slices.Clone(catalogue.Scenarios) }

// Lookup is the named scenario's entry.
func Lookup(name string) (Scenario, bool) {
	i := slices.IndexFunc(catalogue.Scenarios, func(s Scenario) bool { return s.Name == name })
	if i < 0 {
		return Scenario{}, false
	}
	return catalogue.Scenarios[i], true
}

func parse(data []byte) (*catalogueFile, error) {
	var f catalogueFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("scenarios/catalogue.json: %w", err)
	}
	if !slices.Contains(Protocols, f.DefaultProto) {
		return nil, fmt.Errorf("scenarios/catalogue.json: default_proto %q is not a protocol (protocols are %v)", f.DefaultProto, Protocols)
	}
	seen := map[string]bool{}
	equalLoads := 0
	for _, s := range f.Scenarios {
		if err := s.check(seen, f.DefaultProto); err != nil {
			return nil, fmt.Errorf("scenarios/catalogue.json: %w", err)
		}
		seen[s.Name] = true
		if s.Mode == EqualLoad {
			equalLoads++
		}
	}
	if equalLoads > 1 {
		// bench runs one equal-load pass, after the matrix (runner.EqualLoad)
		return nil, fmt.Errorf("scenarios/catalogue.json: %d equal-load scenarios, at most one", equalLoads)
	}
	for name, p := range f.Profiles {
		if p.Duration == "" || p.Warmup == "" || p.FreshDuration == "" || p.CapacityProtos == "" || min(p.Connections, p.Streams, p.Requests, p.FreshConnections, p.Samples, p.Runs) < 1 {
			return nil, fmt.Errorf("scenarios/catalogue.json: profile %s: every field is needed, every count at least 1", name)
		}
	}
	if _, ok := f.Profiles[f.DefaultProfile]; !ok {
		return nil, fmt.Errorf("scenarios/catalogue.json: default_profile %q is not a profile", f.DefaultProfile)
	}
	return &f, nil
}

func (s Scenario) check(seen map[string]bool, defaultProto string) error {
	switch {
	case s.Name == "":
		return errors.New("an entry has no scenario name")
	case seen[s.Name]:
		return fmt.Errorf("%s is listed twice", s.Name)
	case !slices.Contains([]string{Reused, Fresh, Probe, EqualLoad, Idle, Bodies}, s.Mode):
		return fmt.Errorf("%s: unknown mode %q", s.Name, s.Mode)
	case s.Route == "":
		return fmt.Errorf("%s: no route", s.Name)
	case len(s.Protos) == 0:
		return fmt.Errorf("%s: no protocols", s.Name)
	case s.Throughput() && len(s.Protos) != 1:
		return fmt.Errorf("%s: a %s scenario runs over one protocol, got %v", s.Name, s.Mode, s.Protos)
	}
	for _, p := range s.Protos {
		if !slices.Contains(Protocols, p) {
			return fmt.Errorf("%s: unknown protocol %q (protocols are %v)", s.Name, p, Protocols)
		}
	}
	if err := s.checkProbe(); err != nil {
		return err
	}
	// without PROTO, the scripts run a scenario of several protocols over its default_proto, or
	// the catalogue's (lib/catalogue.js)
	if def := cmp.Or(s.DefaultProto, defaultProto); len(s.Protos) > 1 && !slices.Contains(s.Protos, def) {
		return fmt.Errorf("%s: runs over %v, not over its default protocol %s: set default_proto to one of them", s.Name, s.Protos, def)
	}
	return nil
}

// checkProbe holds what the report reads of a probe to what it needs.
func (s Scenario) checkProbe() error {
	if s.Mode != Probe && (s.Figure != nil || s.Gap != nil || s.Details != nil) {
		return fmt.Errorf("%s: figure, gap and details are a probe's; a %s scenario has none", s.Name, s.Mode)
	}
	switch {
	case s.Figure != nil && s.Figure.Says == "":
		return fmt.Errorf("%s: figure: says is empty (what the figure times)", s.Name)
	case s.Gap != nil && (s.Gap.Trend == "" || s.Gap.Says == ""):
		return fmt.Errorf("%s: gap: both trend and says are needed", s.Name)
	case s.Details != nil && (s.Details.Title == "" || len(s.Details.Columns) == 0):
		return fmt.Errorf("%s: details: a title and at least one column are needed", s.Name)
	}
	if s.Details != nil {
		for _, c := range s.Details.Columns {
			if c.Label == "" || c.Trend == "" {
				return fmt.Errorf("%s: details: every column needs a label and a trend", s.Name)
			}
		}
	}
	return nil
}

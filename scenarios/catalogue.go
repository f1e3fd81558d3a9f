// Package scenarios is the catalogue of the k6 scripts in this folder (catalogue.json): each
// scenario's mode, route and protocols. The scripts read the same file (lib/catalogue.js), so a
// scenario is added with one script and one entry.
package scenarios

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

//go:embed catalogue.json
var catalogueJSON []byte

// Modes of a scenario: its connection pattern, which decides its options and its result's rules.
const (
	Reused    = "reused"
	Fresh     = "fresh"
	Probe     = "probe"
	EqualLoad = "equal-load"
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
}

// Throughput tells a reused or fresh scenario from a probe and the equal-load pass.
func (s Scenario) Throughput() bool { return s.Mode == Reused || s.Mode == Fresh }

// Protocols are the protocols a scenario can name.
var Protocols = []string{"h1", "h1c", "h2", "h3"}

// catalogue is parsed once; the embedded file is checked by TestCatalogue.
var catalogue = func() []Scenario {
	c, err := parse(catalogueJSON)
	if err != nil {
		panic(err)
	}
	return c
}()

// All is the catalogue's scenarios, in the order reports list them.
func All() []Scenario { return slices.Clone(catalogue) }

// Lookup is the named scenario's entry.
func Lookup(name string) (Scenario, bool) {
	i := slices.IndexFunc(catalogue, func(s Scenario) bool { return s.Name == name })
	if i < 0 {
		return Scenario{}, false
	}
	return catalogue[i], true
}

func parse(data []byte) ([]Scenario, error) {
	var f struct {
		Scenarios []Scenario `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("scenarios/catalogue.json: %w", err)
	}
	seen := map[string]bool{}
	for _, s := range f.Scenarios {
		if err := s.check(seen); err != nil {
			return nil, fmt.Errorf("scenarios/catalogue.json: %w", err)
		}
		seen[s.Name] = true
	}
	return f.Scenarios, nil
}

func (s Scenario) check(seen map[string]bool) error {
	switch {
	case s.Name == "":
		return errors.New("an entry has no scenario name")
	case seen[s.Name]:
		return fmt.Errorf("%s is listed twice", s.Name)
	case !slices.Contains([]string{Reused, Fresh, Probe, EqualLoad}, s.Mode):
		return fmt.Errorf("%s: unknown mode %q", s.Name, s.Mode)
	case s.Route == "":
		return fmt.Errorf("%s: no route", s.Name)
	case len(s.Protos) == 0:
		return fmt.Errorf("%s: no protocols", s.Name)
	case s.Throughput() && len(s.Protos) != 1:
		return fmt.Errorf("%s: a %s scenario runs over one protocol, got %v", s.Name, s.Mode, s.Protos)
	}
	for _, p := range append(s.Protos, s.DefaultProto) {
		if p != "" && !slices.Contains(Protocols, p) {
			return fmt.Errorf("%s: unknown protocol %q (protocols are %v)", s.Name, p, Protocols)
		}
	}
	return nil
}

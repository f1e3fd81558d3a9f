package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The dashboards of dashboards/definitions are checked without Grafana (none can be installed
// here): what Grafana reads of them is modelled below, and CheckQueries runs every query of a
// dashboard against a real InfluxDB as Grafana's InfluxDB data source would send it.

// Dashboard is what Grafana reads of a dashboard model.
type Dashboard struct {
	File          string  `json:"-"` // its file name in dashboards/definitions
	UID           string  `json:"uid"`
	Title         string  `json:"title"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []Panel `json:"panels"`
	Templating    struct {
		List []Variable `json:"list"`
	} `json:"templating"`
}

// DSRef refers to a data source by type and uid.
type DSRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Panel is a panel (or a row, whose Panels are its own).
type Panel struct {
	ID          int     `json:"id"`
	Type        string  `json:"type"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Datasource  *DSRef  `json:"datasource"`
	GridPos     GridPos `json:"gridPos"`
	Targets     []struct {
		RefID        string `json:"refId"`
		Datasource   *DSRef `json:"datasource"`
		Query        string `json:"query"`
		RawQuery     bool   `json:"rawQuery"`
		ResultFormat string `json:"resultFormat"`
		Alias        string `json:"alias"` // a series' name: $tag_target $tag_scenario
	} `json:"targets"`
	Panels []Panel `json:"panels"` // rows
	// Transformations are Grafana's, in order: a table's "merge" joins its queries' rows.
	Transformations []Transformation `json:"transformations"`
}

// Transformation is one of a panel's transformations, in order.
type Transformation struct {
	ID      string `json:"id"`
	Options struct {
		ExcludeByName map[string]bool `json:"excludeByName"` // organize: the fields dropped
	} `json:"options"`
}

// GridPos places a panel on the 24-column grid.
type GridPos struct{ X, Y, W, H int }

// Variable is a template variable.
type Variable struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Datasource *DSRef `json:"datasource"`
	Query      string `json:"query"`
	Multi      bool   `json:"multi"`
	IncludeAll bool   `json:"includeAll"`
	// AllValue is what All stands for in a query (".*"), instead of every value listed
	AllValue string `json:"allValue"`
}

// builtins are the variables Grafana's InfluxDB data source provides itself.
var builtins = []string{"timeFilter", "__interval", "__interval_ms"}

// LoadDashboards reads every dashboard JSON of dir.
func LoadDashboards(dir string) ([]Dashboard, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("no dashboards in %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no dashboards in %s", dir)
	}
	var out []Dashboard
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var d Dashboard
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, fmt.Errorf("%s: not JSON: %w", f, err)
		}
		d.File = filepath.Base(f)
		out = append(out, d)
	}
	return out, nil
}

// Flatten lists the panels and the panels of rows, in order.
func Flatten(ps []Panel) []Panel {
	var out []Panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, Flatten(p.Panels)...)
	}
	return out
}

// CheckQueries runs a dashboard's queries against InfluxDB base/db as Grafana would for the
// run testid between from and to: each variable in order (testid must offer testid), then
// every panel query with each of targets selected alone, at $__interval 1s and 10s. Each query
// must return data, and only the selected target's series. It returns the variables' values
// and one error per query that failed.
func CheckQueries(ctx context.Context, base, db string, d Dashboard, testid string, targets []string, from, to time.Time) (map[string][]string, []error) {
	var errs []error
	values := map[string][]string{"testid": {testid}}
	// The resource points come from `make bench` alone: a run of k6 without it has none, and a
	// query of them (the comparison's headline: CPU per request) is checked where they are.
	benched, err := tagValues(ctx, base, db, `SHOW TAG VALUES FROM "proxybench_resources" WITH KEY = "testid"`)
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", d.File, err))
	}
	for _, v := range d.Templating.List {
		q := Substitute(v.Query, values, from, to, "1s")
		vals, err := tagValues(ctx, base, db, q)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: variable %s: %w", d.File, v.Name, err))
			continue
		}
		if v.Name == "testid" {
			if !slices.Contains(vals, testid) {
				errs = append(errs, fmt.Errorf("%s: variable testid: %s gives %v, not %s", d.File, q, vals, testid))
			}
			continue
		}
		values[v.Name] = vals
	}
	for _, p := range Flatten(d.Panels) {
		for _, q := range p.Targets {
			if strings.Contains(q.Query, `FROM "proxybench_resources"`) && !slices.Contains(benched, testid) {
				continue
			}
			for _, target := range targets {
				for _, interval := range []string{"1s", "10s"} {
					vals := maps.Clone(values)
					vals["target"] = []string{target}
					query := Substitute(q.Query, vals, from, to, interval)
					series, err := Query(ctx, base, db, query)
					if err != nil {
						errs = append(errs, fmt.Errorf("%s: panel %q query %s: %w", d.File, p.Title, q.RefID, err))
						continue
					}
					if !hasData(series) {
						errs = append(errs, fmt.Errorf("%s: panel %q query %s, target %s, $__interval %s: no data from\n%s",
							d.File, p.Title, q.RefID, target, interval, query))
					}
					for _, s := range series {
						if tt, ok := s.Tags["target"]; ok && tt != target {
							errs = append(errs, fmt.Errorf("%s: panel %q query %s: series of target %s when %s is selected",
								d.File, p.Title, q.RefID, tt, target))
						}
					}
				}
			}
		}
	}
	return values, errs
}

// tagValues runs a SHOW TAG VALUES query and returns the values.
func tagValues(ctx context.Context, base, db, q string) ([]string, error) {
	series, err := Query(ctx, base, db, q)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range series {
		for _, row := range s.Values {
			if v, ok := row[len(row)-1].(string); ok && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out, nil
}

// hasData: at least one row with a non-null value besides the time.
func hasData(series []Series) bool {
	for _, s := range series {
		for _, row := range s.Values {
			for i, v := range row {
				if i < len(s.Columns) && s.Columns[i] == "time" {
					continue
				}
				if v != nil {
					return true
				}
			}
		}
	}
	return false
}

var regexMeta = regexp.MustCompile(`[\\^$*+?.()|{}\[\]/]`)

// Substitute interpolates a query as Grafana's InfluxDB data source does: $timeFilter,
// $__interval(_ms), and each variable used in a regex (/^$var$/) as its regex-escaped value,
// or (v1|v2|…) when several values (or All) are selected.
func Substitute(q string, values map[string][]string, from, to time.Time, interval string) string {
	d, err := time.ParseDuration(interval)
	if err != nil {
		panic(err)
	}
	q = strings.ReplaceAll(q, "$timeFilter", fmt.Sprintf("time >= %dms and time <= %dms", from.UnixMilli(), to.UnixMilli()))
	q = strings.ReplaceAll(q, "$__interval_ms", strconv.FormatInt(d.Milliseconds(), 10))
	q = strings.ReplaceAll(q, "$__interval", interval)
	return SubstituteVars(q, values)
}

// SubstituteVars interpolates the dashboard's own variables alone, as Grafana's frontend does
// before it sends a query: $timeFilter and $__interval are left for Grafana's backend.
func SubstituteVars(q string, values map[string][]string) string {
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) }) // $testid before a $test
	for _, n := range names {
		vals := make([]string, 0, len(values[n]))
		for _, v := range values[n] {
			vals = append(vals, regexMeta.ReplaceAllString(v, `\$0`))
		}
		rep := strings.Join(vals, "|")
		if len(vals) > 1 {
			rep = "(" + rep + ")"
		}
		q = strings.ReplaceAll(q, "${"+n+"}", rep)
		q = strings.ReplaceAll(q, "$"+n, rep)
	}
	return q
}

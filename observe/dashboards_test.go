package observe

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Dashboards are tested without Grafana (which can't be installed here): this file checks that
// every dashboard is a valid Grafana model wired to the provisioned data source; the
// end-to-end test runs every query against a real InfluxDB.

var root = func() string {
	abs, err := filepath.Abs("..")
	if err != nil {
		panic(err)
	}
	return abs
}()

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := parseYAML(string(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: not a map", path)
	}
	return m
}

// provisionedUIDs reads dashboards/provisioning/datasources/*.yaml: uid → type.
func provisionedUIDs(t *testing.T) map[string]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, "dashboards", "provisioning", "datasources", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no data source provisioning file")
	}
	uids := map[string]string{}
	for _, f := range files {
		doc := readYAML(t, f)
		if doc["apiVersion"] != 1 {
			t.Errorf("%s: apiVersion %v, want 1", f, doc["apiVersion"])
		}
		list, _ := doc["datasources"].([]any)
		if len(list) == 0 {
			t.Errorf("%s: no datasources", f)
		}
		for _, item := range list {
			ds, _ := item.(map[string]any)
			uid, _ := ds["uid"].(string)
			typ, _ := ds["type"].(string)
			if uid == "" || typ == "" || ds["name"] == nil || ds["url"] == nil {
				t.Errorf("%s: a data source needs name, type, uid and url: %v", f, ds)
				continue
			}
			if _, dup := uids[uid]; dup {
				t.Errorf("%s: uid %s defined twice", f, uid)
			}
			uids[uid] = typ
			if typ == "influxdb" {
				jd, _ := ds["jsonData"].(map[string]any)
				// Grafana before 9 reads database, later ones jsonData.dbName: both, or some fail
				// every panel with "database name required"
				if jd["dbName"] != DefaultBucket || ds["database"] != DefaultBucket {
					t.Errorf("%s: %s reads database %v (jsonData.dbName) and %v (database), the k6 output writes %q to both", f, uid, jd["dbName"], ds["database"], DefaultBucket)
				}
			}
		}
	}
	return uids
}

func loadDashboards(t *testing.T) []Dashboard {
	t.Helper()
	ds, err := LoadDashboards(filepath.Join(root, "dashboards", "definitions"))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestProvisioningDashboardsProvider(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(root, "dashboards", "provisioning", "dashboards", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no dashboard provider file")
	}
	for _, f := range files {
		doc := readYAML(t, f)
		providers, _ := doc["providers"].([]any)
		if doc["apiVersion"] != 1 || len(providers) == 0 {
			t.Fatalf("%s: want apiVersion 1 and providers", f)
		}
		for _, item := range providers {
			p, _ := item.(map[string]any)
			opts, _ := p["options"].(map[string]any)
			if p["type"] != "file" || p["name"] == nil || opts["path"] == nil {
				t.Errorf("%s: a file provider needs name, type: file and options.path: %v", f, p)
			}
		}
	}
}

func TestDashboardModels(t *testing.T) {
	t.Parallel()
	uids := provisionedUIDs(t)
	seenUID := map[string]string{}
	varRE := regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)
	for _, d := range loadDashboards(t) {
		t.Run(d.File, func(t *testing.T) {
			if d.UID == "" || len(d.UID) > 40 || d.Title == "" || d.SchemaVersion < 36 {
				t.Errorf("uid %q (1-40 chars), title %q and schemaVersion %d (≥ 36) are required", d.UID, d.Title, d.SchemaVersion)
			}
			if other, dup := seenUID[d.UID]; dup {
				t.Errorf("uid %s is also %s's", d.UID, other)
			}
			seenUID[d.UID] = d.File
			checkRef := func(where string, ref *DSRef) {
				if ref == nil {
					t.Errorf("%s: no datasource (refer to it by {type, uid})", where)
					return
				}
				if typ, ok := uids[ref.UID]; !ok || typ != ref.Type {
					t.Errorf("%s: datasource %+v is not provisioned (provisioned: %v)", where, *ref, uids)
				}
			}
			defined := slices.Clone(builtins)
			for _, v := range d.Templating.List {
				checkRef("variable "+v.Name, v.Datasource)
				if v.Type != "query" || v.Query == "" {
					t.Errorf("variable %s: want a query variable", v.Name)
				}
				defined = append(defined, v.Name)
			}
			want := []string{"testid", "target", "proto", "mode"}
			if onlyCurves(d) {
				want = want[:3] // every point is a capacity step's or a sweep's: no mode to pick
			}
			for _, want := range want {
				if !slices.Contains(defined, want) {
					t.Errorf("no %s variable", want)
				}
			}
			ids := map[int]string{}
			var boxes []Panel
			for _, p := range Flatten(d.Panels) {
				where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
				if p.ID <= 0 {
					t.Errorf("%s: id must be positive", where)
				}
				if other, dup := ids[p.ID]; dup {
					t.Errorf("%s: id also used by %q", where, other)
				}
				ids[p.ID] = p.Title
				if p.Type == "row" {
					continue
				}
				if !slices.Contains([]string{"timeseries", "table", "stat", "bargauge", "text", "heatmap", "xychart"}, p.Type) {
					t.Errorf("%s: unexpected type %q", where, p.Type)
				}
				g := p.GridPos
				if g.W < 1 || g.H < 1 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
					t.Errorf("%s: GridPos %+v outside the 24-column grid", where, g)
				}
				for _, o := range boxes {
					if overlaps(g, o.GridPos) {
						t.Errorf("%s: GridPos %+v overlaps panel %d %+v", where, g, o.ID, o.GridPos)
					}
				}
				boxes = append(boxes, p)
				checkRef(where, p.Datasource)
				if len(p.Targets) == 0 {
					t.Errorf("%s: no query", where)
				}
				refs := map[string]bool{}
				for _, q := range p.Targets {
					checkRef(where+" query "+q.RefID, q.Datasource)
					if q.RefID == "" || refs[q.RefID] {
						t.Errorf("%s: refId %q empty or repeated", where, q.RefID)
					}
					refs[q.RefID] = true
					if !q.RawQuery || strings.TrimSpace(q.Query) == "" {
						t.Errorf("%s query %s: want a raw InfluxQL query", where, q.RefID)
					}
					for _, m := range varRE.FindAllStringSubmatch(q.Query, -1) {
						if !slices.Contains(defined, m[1]) {
							t.Errorf("%s query %s: $%s is not a variable of this dashboard", where, q.RefID, m[1])
						}
					}
				}
			}
		})
	}
	if len(seenUID) < 3 {
		t.Errorf("want at least the comparison, live and probes dashboards, got %d", len(seenUID))
	}
}

// onlyCurves: every query of d reads the capacity steps or the sweeps' points.
func onlyCurves(d Dashboard) bool {
	for _, p := range Flatten(d.Panels) {
		for _, q := range p.Targets {
			if !strings.Contains(q.Query, `FROM "`+CapacityMeasurement+`"`) && !strings.Contains(q.Query, `FROM "`+SweepMeasurement+`"`) {
				return false
			}
		}
	}
	return true
}

func overlaps(a, b GridPos) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

func TestParseYAMLSubset(t *testing.T) {
	t.Parallel()
	v, err := parseYAML("# c\na: 1\nb:\n  - name: x # trailing\n    url: 'it''s'\n  - name: \"y\"\nc:\n  d: true\n")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":1,"b":[{"name":"x","url":"it's"},{"name":"y"}],"c":{"d":true}}`
	if got, _ := json.Marshal(v); string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for _, bad := range []string{"a: [1, 2]\n", "a:\n\tb: 1\n", "a: 1\na: 2\n", "a: 1\n  b: 2\n", "just text\n"} {
		if _, err := parseYAML(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// A bar gauge or a stat is coloured by Grafana's default thresholds (green, red from 80) unless
// it says otherwise: high req/s showed red and a 63 req/s cell green. Each one states its
// thresholds, and none paints more work (req/s, requests) red.
func TestPanelColoursAreStated(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(root, "dashboards", "definitions", "*.json"))
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Panels []json.RawMessage `json:"panels"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, raw := range d.Panels {
			var p struct {
				Type, Title string
				FieldConfig struct {
					Defaults struct {
						Unit       string `json:"unit"`
						Thresholds *struct {
							Steps []struct {
								Color string `json:"color"`
							} `json:"steps"`
						} `json:"thresholds"`
					} `json:"defaults"`
				} `json:"fieldConfig"`
			}
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if p.Type != "bargauge" && p.Type != "stat" {
				continue
			}
			checked++
			th := p.FieldConfig.Defaults.Thresholds
			if th == nil || len(th.Steps) == 0 {
				t.Errorf("%s %q: no thresholds, so Grafana's default (red from 80) colours it", filepath.Base(f), p.Title)
				continue
			}
			if u := p.FieldConfig.Defaults.Unit; u == "reqps" || u == "short" {
				for _, s := range th.Steps {
					if strings.Contains(s.Color, "red") {
						t.Errorf("%s %q: %s is more work done, and a threshold paints it %s", filepath.Base(f), p.Title, u, s.Color)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no bar gauge or stat panel found: the test reads nothing")
	}
}

// compose.yaml mounts dashboards/provisioning over Grafana's own provisioning directory: every
// folder Grafana reads there must exist, or it logs an error at every start.
func TestProvisioningHasEveryFolder(t *testing.T) {
	t.Parallel()
	for _, d := range []string{"dashboards", "datasources", "plugins", "alerting", "notifiers"} {
		if fi, err := os.Stat(filepath.Join(root, "dashboards", "provisioning", d)); err != nil || !fi.IsDir() {
			t.Errorf("dashboards/provisioning/%s: %v", d, err)
		}
	}
}

// Grafana 9.3 gives each query of a panel its own time when the range is relative (InfluxQL's
// now() is read per statement), so a merge that joins on Time as well as the tags leaves every
// query's figures on rows of their own. Every merging table drops Time before it merges.
func TestMergedTablesIgnoreTime(t *testing.T) {
	t.Parallel()
	for _, d := range loadDashboards(t) {
		for _, p := range Flatten(d.Panels) {
			for i, tr := range p.Transformations {
				if tr.ID != "merge" {
					continue
				}
				if i == 0 || p.Transformations[i-1].ID != "organize" || !p.Transformations[i-1].Options.ExcludeByName["Time"] {
					t.Errorf("%s: panel %q merges its queries without dropping Time first (an organize excluding Time)", d.File, p.Title)
				}
			}
		}
	}
}

var groupTag = regexp.MustCompile(`"([A-Za-z_]+)"`)

// A graph's series are named by the alias: it must name every tag the query groups by, or a
// legend shows "nginx" once per scenario with nothing to tell them apart.
func TestAliasesNameGroupedTags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query, alias string
		missing      []string
	}{
		{`SELECT x FROM m GROUP BY time(1s), "target", "scenario" fill(none)`, "$tag_target $tag_scenario", nil},
		{`SELECT x FROM (SELECT y FROM m GROUP BY "proto") GROUP BY time(1s), "target" fill(none)`, "$tag_target", nil},
		{`SELECT x FROM m GROUP BY time(1s), "target", "scenario" fill(none)`, "$tag_target", []string{"scenario"}},
		{`SELECT x FROM m`, "", nil},
		{`SELECT q FROM (SELECT y FROM m GROUP BY "le", "target") WHERE q > 0 GROUP BY "le", "target"`, "$tag_target", nil},
	}
	for _, tt := range tests {
		if got := unnamedTags(tt.query, tt.alias); !slices.Equal(got, tt.missing) {
			t.Errorf("unnamedTags(%q, %q) = %v, want %v", tt.query, tt.alias, got, tt.missing)
		}
	}
	for _, d := range loadDashboards(t) {
		for _, p := range Flatten(d.Panels) {
			for _, q := range p.Targets {
				if q.ResultFormat == "table" {
					continue
				}
				if missing := unnamedTags(q.Query, q.Alias); len(missing) > 0 {
					t.Errorf("%s: panel %q query %s groups by %v, which its alias %q does not name", d.File, p.Title, q.RefID, missing, q.Alias)
				}
			}
		}
	}
}

// unnamedTags are the tags of a query's outermost GROUP BY that alias has no $tag_ of.
func unnamedTags(query, alias string) []string {
	i := strings.LastIndex(query, "GROUP BY")
	if i < 0 || strings.Count(query[i:], ")") > strings.Count(query[i:], "(") {
		return nil // no GROUP BY, or a subquery's: the outer query has none
	}
	clause := query[i:]
	if j := strings.Index(clause, "fill("); j >= 0 {
		clause = clause[:j]
	}
	var missing []string
	for _, m := range groupTag.FindAllStringSubmatch(clause, -1) {
		// le: a _cdf quantile keeps the one row of its series the quantile falls in
		if m[1] != "le" && !strings.Contains(alias, "$tag_"+m[1]) {
			missing = append(missing, m[1])
		}
	}
	return missing
}

// Grafana 9.3 sometimes queried a panel before a variable's values had loaded, expanding All
// to nothing, and did not query again once they came (All is still All): the panel stayed "No
// data" in one page load out of three. An allValue of .* needs no values, and is one regex.
func TestAllIsAllValue(t *testing.T) {
	t.Parallel()
	for _, d := range loadDashboards(t) {
		for _, v := range d.Templating.List {
			if v.IncludeAll && v.AllValue != ".*" {
				t.Errorf("%s: variable %s offers All without allValue .* (%q)", d.File, v.Name, v.AllValue)
			}
		}
	}
}

// The comparison takes several testids at once (a Docker stack's runs share one, and a user
// sets it beside another): the variable is multi-value with All, and every query with a row or
// series per target has one per testid too, so that no figure is summed across runs (the
// heatmap, merged over everything, groups by neither).
func TestComparisonTellsTestidsApart(t *testing.T) {
	t.Parallel()
	byTarget := regexp.MustCompile(`GROUP BY (time\([^)]*\), )?[^)]*"target"`)
	for _, d := range loadDashboards(t) {
		if d.File != "proxy-comparison.json" {
			continue
		}
		for _, v := range d.Templating.List {
			if v.Name == "testid" && (!v.Multi || !v.IncludeAll) {
				t.Errorf("%s: variable testid: multi %v, includeAll %v; want both", d.File, v.Multi, v.IncludeAll)
			}
		}
		n := 0
		for _, p := range Flatten(d.Panels) {
			for _, q := range p.Targets {
				for _, g := range byTarget.FindAllString(q.Query, -1) {
					n++
					if !strings.Contains(g, `"testid", "target"`) {
						t.Errorf("%s: panel %q query %s: %q groups by target, not by testid", d.File, p.Title, q.RefID, g)
					}
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no query groups by target", d.File)
		}
	}
}

package observe

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// mergedRows joins a table panel's query results as Grafana's merge transformation does:
// rows whose time and tags are all equal become one row; rows that differ in any of them stay
// apart, and their other columns show empty. It returns the rows and every value column.
func mergedRows(results [][]Series) ([]map[string]any, []string) {
	keys := []string{"time"}
	var cols []string
	for _, series := range results {
		for _, s := range series {
			for k := range s.Tags {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
			for _, c := range s.Columns[1:] {
				if !slices.Contains(cols, c) {
					cols = append(cols, c)
				}
			}
		}
	}
	slices.Sort(keys[1:])
	byKey := map[string]map[string]any{}
	var order []string
	for _, series := range results {
		for _, s := range series {
			for _, v := range s.Values {
				fields := map[string]any{"time": v[0]}
				for k, tv := range s.Tags {
					fields[k] = tv
				}
				var id strings.Builder
				for _, k := range keys {
					fmt.Fprintf(&id, "%v\x00", fields[k])
				}
				row, ok := byKey[id.String()]
				if !ok {
					row = fields
					byKey[id.String()] = row
					order = append(order, id.String())
				}
				for i, c := range s.Columns[1:] {
					row[c] = v[i+1]
				}
			}
		}
	}
	rows := make([]map[string]any, 0, len(order))
	for _, id := range order {
		rows = append(rows, byKey[id])
	}
	return rows, cols
}

func TestMergedRows(t *testing.T) {
	t.Parallel()
	tags := map[string]string{"target": "nginx"}
	a := []Series{{Tags: tags, Columns: []string{"time", "requests"}, Values: [][]any{{0.0, 10.0}}}}
	sameTime := []Series{{Tags: tags, Columns: []string{"time", "p50 ms"}, Values: [][]any{{0.0, 1.5}}}}
	otherTime := []Series{{Tags: tags, Columns: []string{"time", "p50 ms"}, Values: [][]any{{7.0, 1.5}}}}
	extraTag := []Series{{Tags: map[string]string{"target": "nginx", "le": "2"}, Columns: []string{"time", "p50 ms"}, Values: [][]any{{0.0, 1.5}}}}
	tests := []struct {
		name  string
		other []Series
		rows  int
	}{{"same time and tags: one row", sameTime, 1}, {"another time: two", otherTime, 2}, {"another tag: two", extraTag, 2}}
	for _, tt := range tests {
		rows, cols := mergedRows([][]Series{a, tt.other})
		if len(rows) != tt.rows || !slices.Equal(cols, []string{"requests", "p50 ms"}) {
			t.Errorf("%s: %d rows %v, columns %v", tt.name, len(rows), rows, cols)
		}
	}
}

// checkMergedTables runs every query of each table panel that merges its queries, as Grafana
// would with the dashboard's variables set to values, and fails when rows of the same tags did
// not join (another time, or a tag one query adds): Grafana 9.3 then showed the side-by-side
// table's req/s in one row and its percentiles in others, each with empty cells. Queries of
// other scenarios leave cells empty by design: a row per scenario is what such a table shows.
func checkMergedTables(ctx context.Context, t *testing.T, base, db string, d Dashboard, values map[string][]string, from, to time.Time) {
	t.Helper()
	for _, p := range Flatten(d.Panels) {
		if !slices.ContainsFunc(p.Transformations, func(tr Transformation) bool { return tr.ID == "merge" }) {
			continue
		}
		var results [][]Series
		for _, q := range p.Targets {
			series, err := Query(ctx, base, db, Substitute(q.Query, values, from, to, "1s"))
			if err != nil {
				t.Errorf("%s %q %s: %v", d.File, p.Title, q.RefID, err)
				continue
			}
			if len(series) > 0 {
				results = append(results, series)
			}
		}
		rows, _ := mergedRows(results)
		if len(rows) == 0 {
			t.Errorf("%s %q: no rows", d.File, p.Title)
		}
		shared := sharedTags(results)
		seen := map[string]map[string]any{}
		for _, r := range rows {
			var id strings.Builder
			for _, k := range shared {
				fmt.Fprintf(&id, "%s=%v ", k, r[k])
			}
			if other, dup := seen[id.String()]; dup {
				t.Errorf("%s %q: rows of %s did not join: %v and %v (another time, or a tag only some queries have)", d.File, p.Title, id.String(), other, r)
			}
			seen[id.String()] = r
		}
	}
}

// sharedTags are the tags every query's series carry.
func sharedTags(results [][]Series) []string {
	var shared []string
	for i, series := range results {
		var tags []string
		for _, s := range series {
			for k := range s.Tags {
				if !slices.Contains(tags, k) {
					tags = append(tags, k)
				}
			}
		}
		if i == 0 {
			shared = tags
			continue
		}
		shared = slices.DeleteFunc(shared, func(k string) bool { return !slices.Contains(tags, k) })
	}
	slices.Sort(shared)
	return shared
}

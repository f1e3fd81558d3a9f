package observe

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A test split across k6 instances writes one series per instance (tag instance_id): a query
// that takes the mean, the last or the first point over them, or the max of a count, shows one
// instance's share, or their average, instead of the run. These tests hold every dashboard
// query to summing over instance_id; a query may do anything else only once it has grouped by
// instance_id, or over a subquery that already summed.

// additiveFields are fields of the k6 output whose figures add up across instances: counts,
// sums, per-second rates, gauge values (VUs) and the cdf rows' cumulative counts.
var additiveFields = []string{"count", "sum", "per_s", "value", "below", "below_lo"}

// boundFields may be taken at their max (or min) over instances: the highest instance's
// percentile is an upper bound of the merged one (a panel saying so), max and min merge
// exactly, a cdf row's bounds and a run's share are the same in every instance.
var boundFields = map[string][]string{
	"max": {"p50", "p90", "p95", "p99", "p999", "max", "lo", "hi", "share"},
	"min": {"min", "lo", "hi"},
}

// selectLevel is one SELECT of a query: its field list, what it reads (a measurement, or a
// subquery), and its GROUP BY.
type selectLevel struct {
	fields, measurement, groupBy string
	sub                          bool
}

// selectLevels splits an InfluxQL SELECT and its nested subqueries (FROM (…)) into levels,
// outermost first.
func selectLevels(q string) ([]selectLevel, error) {
	q = strings.TrimSpace(q)
	if !strings.HasPrefix(strings.ToUpper(q), "SELECT ") {
		return nil, nil // SHOW … and other statements read no points
	}
	from := indexTop(q, " FROM ")
	if from < 0 {
		return nil, fmt.Errorf("no FROM in %s", q)
	}
	lv := selectLevel{fields: q[len("SELECT "):from]}
	rest := strings.TrimSpace(q[from+len(" FROM "):])
	var inner []selectLevel
	if strings.HasPrefix(rest, "(") {
		end := matchParen(rest)
		if end < 0 {
			return nil, fmt.Errorf("unbalanced subquery in %s", q)
		}
		var err error
		if inner, err = selectLevels(rest[1:end]); err != nil {
			return nil, err
		}
		lv.sub = true
		rest = rest[end+1:]
	} else {
		m := regexp.MustCompile(`^"([^"]+)"|^([A-Za-z_][A-Za-z0-9_.]*)`).FindStringSubmatch(rest)
		if m == nil {
			return nil, fmt.Errorf("unreadable FROM in %s", q)
		}
		lv.measurement = m[1] + m[2]
		rest = rest[len(m[0]):]
	}
	if g := indexTop(rest, " GROUP BY "); g >= 0 {
		lv.groupBy = rest[g+len(" GROUP BY "):]
	}
	return append([]selectLevel{lv}, inner...), nil
}

// indexTop finds sep outside parentheses and quotes.
func indexTop(s, sep string) int {
	depth, quote := 0, byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0 && strings.HasPrefix(strings.ToUpper(s[i:]), sep):
			return i
		}
	}
	return -1
}

// matchParen is the index of the parenthesis closing s[0].
func matchParen(s string) int {
	depth, quote := 0, byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

var callRE = regexp.MustCompile(`(?i)\b([a-z_]+)\(\s*"([^"]+)"\s*\)`)

// instanceProblems lists what in query q does not sum over instance_id.
func instanceProblems(q string) []string {
	levels, err := selectLevels(q)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, lv := range levels {
		if lv.sub || slices.Contains([]string{ResourcesMeasurement, CapacityMeasurement, SweepMeasurement}, lv.measurement) || strings.Contains(lv.groupBy, `"instance_id"`) {
			continue // over summed rows; the runner's one point per run, step or sweep's point; or per instance on purpose
		}
		calls := callRE.FindAllStringSubmatch(lv.fields, -1)
		if len(calls) == 0 {
			out = append(out, fmt.Sprintf("%s: raw fields %s shows each instance's points apart", lv.measurement, lv.fields))
		}
		for _, c := range calls {
			fn, fieldName := strings.ToLower(c[1]), c[2]
			switch {
			case fn == "sum" && slices.Contains(additiveFields, fieldName):
			case slices.Contains(boundFields[fn], fieldName):
			case fn == "sum":
				out = append(out, fmt.Sprintf("%s: sum(%q): %s does not add up across instances", lv.measurement, fieldName, fieldName))
			case slices.Contains(additiveFields, fieldName):
				out = append(out, fmt.Sprintf("%s: %s(%q) over instance_id: sum it", lv.measurement, fn, fieldName))
			default:
				out = append(out, fmt.Sprintf("%s: %s(%q) over instance_id: neither a sum nor a bound", lv.measurement, fn, fieldName))
			}
		}
	}
	return out
}

func TestDashboardQueriesSumOverInstances(t *testing.T) {
	t.Parallel()
	n := 0
	for _, d := range loadDashboards(t) {
		for _, v := range d.Templating.List {
			for _, p := range instanceProblems(v.Query) {
				t.Errorf("%s: variable %s: %s", d.File, v.Name, p)
			}
		}
		for _, p := range Flatten(d.Panels) {
			for _, q := range p.Targets {
				n++
				for _, problem := range instanceProblems(q.Query) {
					t.Errorf("%s: panel %q query %s: %s\n%s", d.File, p.Title, q.RefID, problem, q.Query)
				}
				if strings.Contains(q.Query, `max("p`) && !strings.Contains(p.Description, "upper bound") {
					t.Errorf("%s: panel %q shows the highest instance's percentile: its description must say it is an upper bound of a split run's", d.File, p.Title)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no queries")
	}
}

// The rule itself: what it must refuse and what it must let through.
func TestInstanceRule(t *testing.T) {
	t.Parallel()
	const w = `WHERE "agg" = 'interval' AND $timeFilter`
	for _, tc := range []struct {
		q   string
		bad bool
	}{
		{`SELECT mean("per_s") FROM "http_reqs" ` + w + ` GROUP BY time($__interval)`, true},
		{`SELECT last("value") FROM "vus" ` + w + ` GROUP BY "target"`, true},
		{`SELECT first("sum") FROM "http_reqs" ` + w, true},
		{`SELECT max("value") FROM "vus" ` + w + ` GROUP BY time($__interval)`, true},
		{`SELECT mean("p99") FROM "http_req_duration" ` + w, true},
		{`SELECT max("rate") FROM "http_req_failed" ` + w, true},
		{`SELECT "p99" FROM "http_req_duration" ` + w, true},
		{`SELECT mean("r") FROM (SELECT mean("per_s") AS "r" FROM "http_reqs" ` + w + ` GROUP BY time(1s)) GROUP BY time($__interval)`, true},
		{`SELECT sum("per_s") FROM "http_reqs" ` + w + ` GROUP BY time(1s)`, false},
		{`SELECT sum("sum") / sum("count") FROM "http_req_failed" ` + w, false},
		{`SELECT mean("r") FROM (SELECT sum("per_s") AS "r" FROM "http_reqs" ` + w + ` GROUP BY time(1s)) WHERE $timeFilter GROUP BY time($__interval)`, false},
		{`SELECT last("v") FROM (SELECT sum("value") AS "v" FROM "vus" ` + w + ` GROUP BY time(1s)) GROUP BY "target"`, false},
		{`SELECT sum("r") / sum("s") FROM (SELECT sum("per_s") AS "r", max("share") AS "s" FROM "http_reqs" WHERE "agg" = 'run' GROUP BY time(1s), "instance_id")`, false},
		{`SELECT last("value") FROM "vus" ` + w + ` GROUP BY "instance_id"`, false},
		{`SELECT max("max") AS "max ms", sum("count") AS "samples" FROM "http_req_waiting" ` + w, false},
		{`SHOW TAG VALUES FROM "http_reqs" WITH KEY = "target"`, false},
	} {
		got := instanceProblems(tc.q)
		if (len(got) > 0) != tc.bad {
			t.Errorf("%s: problems %q, want bad=%v", tc.q, got, tc.bad)
		}
	}
}

package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/net/html"

	"github.com/proxybench/proxybench/stack"
)

// Grafana beside InfluxDB: started natively from an installed Grafana (GRAFANA_HOME, or
// grafana-server/grafana on PATH) and provisioned from dashboards/provisioning exactly as a
// user's would be, for `make up OBSERVE=1` and for `make test-dashboards`, which runs every
// panel's queries through it.

// Grafana's defaults here: on loopback, and the dashboard a bench is looked at with.
const (
	GrafanaDefaultAddr = "127.0.0.1:3000"
	// ComparisonUID is the uid of dashboards/definitions/proxy-comparison.json.
	ComparisonUID = "proxybench-comparison"
	// CurvesUID is the uid of dashboards/definitions/curves.json (the capacity search, the sweeps).
	CurvesUID = "proxybench-curves"
	// DataSourceUID is the provisioned InfluxDB data source every panel refers to.
	DataSourceUID = "proxybench-influxdb"
)

// ErrAddrInUse says something (a Grafana of the user's own, say) already listens where Grafana
// would.
var ErrAddrInUse = errors.New("grafana: address in use")

// GrafanaInstall is an installed Grafana: its binary and its home directory (conf/defaults.ini,
// public/).
type GrafanaInstall struct {
	Bin  string
	Home string
}

// FindGrafana locates a Grafana: $GRAFANA_HOME (its bin/grafana-server or bin/grafana), else
// grafana-server or grafana on PATH with the home its packages use. It errors when none is
// installed; the caller says so and goes on without one.
func FindGrafana() (*GrafanaInstall, error) {
	if home := os.Getenv("GRAFANA_HOME"); home != "" {
		return grafanaAt(home)
	}
	for _, name := range []string{"grafana-server", "grafana"} {
		bin, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		// a tarball's bin/ sits in its home; Debian's and RPM's packages use /usr/share/grafana
		resolved, _ := filepath.EvalSymlinks(bin)
		for _, home := range []string{filepath.Dir(filepath.Dir(resolved)), "/usr/share/grafana"} {
			if _, err := os.Stat(filepath.Join(home, "conf", "defaults.ini")); err == nil {
				return &GrafanaInstall{Bin: bin, Home: home}, nil
			}
		}
		return nil, fmt.Errorf("%s is on PATH but its home (conf/defaults.ini) is not found: set GRAFANA_HOME", bin)
	}
	return nil, errors.New("no Grafana installed (neither GRAFANA_HOME nor grafana-server/grafana on PATH)")
}

func grafanaAt(home string) (*GrafanaInstall, error) {
	if _, err := os.Stat(filepath.Join(home, "conf", "defaults.ini")); err != nil {
		return nil, fmt.Errorf("GRAFANA_HOME=%s is not a Grafana home (no conf/defaults.ini): %w", home, err)
	}
	for _, name := range []string{"grafana-server", "grafana"} {
		bin := filepath.Join(home, "bin", name)
		if _, err := os.Stat(bin); err == nil {
			return &GrafanaInstall{Bin: bin, Home: home}, nil
		}
	}
	return nil, fmt.Errorf("GRAFANA_HOME=%s has neither bin/grafana-server nor bin/grafana", home)
}

// argv starts the server in the foreground: `grafana-server` (up to 9.x), or `grafana server`
// (the one binary of 10.x onwards; its grafana-server is a deprecated wrapper).
func (g *GrafanaInstall) argv() []string {
	if filepath.Base(g.Bin) == "grafana" {
		return []string{g.Bin, "server", "--homepath", g.Home}
	}
	return []string{g.Bin, "--homepath", g.Home}
}

// GrafanaServer is a Grafana started by StartGrafana.
type GrafanaServer struct {
	stack.Process
	Addr string `json:"addr"` // host:port
	Dir  string `json:"dir"`  // its data, logs and plugins
}

// URL is Grafana's base URL.
func (g *GrafanaServer) URL() string { return "http://" + g.Addr }

// DashboardURL is dashboard uid (ComparisonUID, CurvesUID) of one run, as a user opens it: on
// the run's own time window, from a little before it started to a little after it finished, when both are
// known (the dashboard's default, the last hour, would miss a run older than that and squeeze
// a short one), else on the default.
func DashboardURL(base, uid, testid string, started, finished time.Time) string {
	u := base + "/d/" + uid + "?orgId=1&var-testid=" + url.QueryEscape(testid)
	if !started.IsZero() && finished.After(started) {
		u += fmt.Sprintf("&from=%d&to=%d", started.Add(-dashboardMargin).UnixMilli(), finished.Add(dashboardMargin).UnixMilli())
	}
	return u
}

// dashboardMargin pads a run's window on the dashboard: its first and last points stay off the
// edges, and an interval's point written just after the end is in.
const dashboardMargin = 15 * time.Second

// GrafanaEnv is the environment that provisions Grafana from root/dashboards/provisioning, as
// dashboards/README.md tells a user to: the data source at influxURL, the dashboards read
// from root/dashboards/definitions, every path under dir (nothing written into its home),
// anonymous read-only (Viewer) access and no admin user, no call to grafana.com.
func GrafanaEnv(root, dir, addr, influxURL string) ([]string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("grafana address %q: %w", addr, err)
	}
	return []string{
		"GF_PATHS_DATA=" + filepath.Join(dir, "data"),
		"GF_PATHS_LOGS=" + filepath.Join(dir, "logs"),
		"GF_PATHS_PLUGINS=" + filepath.Join(dir, "plugins"),
		"GF_PATHS_PROVISIONING=" + filepath.Join(root, "dashboards", "provisioning"),
		"GF_SERVER_HTTP_ADDR=" + host,
		"GF_SERVER_HTTP_PORT=" + port,
		"GF_AUTH_ANONYMOUS_ENABLED=true",
		"GF_AUTH_ANONYMOUS_ORG_ROLE=Viewer",
		"GF_AUTH_DISABLE_LOGIN_FORM=true",
		"GF_SECURITY_DISABLE_INITIAL_ADMIN_CREATION=true",
		"GF_USERS_ALLOW_SIGN_UP=false",
		"GF_ANALYTICS_REPORTING_ENABLED=false",
		"GF_ANALYTICS_CHECK_FOR_UPDATES=false",
		"GF_ANALYTICS_CHECK_FOR_PLUGIN_UPDATES=false",
		"GF_NEWS_NEWS_FEED_ENABLED=false",
		"GF_LOG_MODE=console",
		"INFLUXDB_URL=" + influxURL,
		"DASHBOARDS_DIR=" + filepath.Join(root, "dashboards", "definitions"),
	}, nil
}

// StartGrafana starts g in its own process group, provisioned from root (GrafanaEnv), its
// state under dir, and waits until its API answers and has provisioned the dashboards. On
// failure nothing is left running.
func StartGrafana(ctx context.Context, g *GrafanaInstall, root, dir, addr, influxURL string) (*GrafanaServer, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("grafana address %q: %w", addr, err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("%w: %s (%w): `make observe-down` if it is ours; else GRAFANA_ADDR=127.0.0.1:3001", ErrAddrInUse, addr, err)
	}
	_ = l.Close()
	if err := os.MkdirAll(filepath.Join(dir, "plugins"), 0o755); err != nil {
		return nil, err
	}
	env, err := GrafanaEnv(root, dir, addr, influxURL)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "grafana.log")
	_ = os.Remove(logPath)
	p, err := stack.StartProcess(g.argv(), append(os.Environ(), env...), dir, logPath)
	if err != nil {
		return nil, err
	}
	s := &GrafanaServer{Process: *p, Addr: addr, Dir: dir}
	if err := s.waitReady(ctx, 90*time.Second); err != nil {
		_ = s.Stop(10 * time.Second)
		return nil, err
	}
	return s, nil
}

// waitReady waits for /api/health and then for the provisioned comparison dashboard: Grafana
// answers before its file provider has read the dashboards.
func (g *GrafanaServer) waitReady(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var last error
	for {
		last = g.Get(ctx, "/api/dashboards/uid/"+ComparisonUID, nil)
		if last == nil {
			return nil
		}
		select {
		case <-g.Exited():
			return fmt.Errorf("grafana exited during start-up; last lines of %s:\n%s", g.Log, stack.Tail(g.Log, 30))
		case <-ctx.Done():
			return fmt.Errorf("grafana did not serve dashboard %s on %s within %v (%w); last lines of %s:\n%s",
				ComparisonUID, g.Addr, limit, last, g.Log, stack.Tail(g.Log, 30))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Get GETs path of Grafana's API and decodes its JSON into out (when not nil).
func (g *GrafanaServer) Get(ctx context.Context, path string, out any) error {
	return g.do(ctx, http.MethodGet, path, nil, out)
}

func (g *GrafanaServer) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.URL()+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

// Frame is one data frame of a /api/ds/query answer: its fields (columns) and their values.
type Frame struct {
	Schema struct {
		Name   string `json:"name"`
		Fields []struct {
			Name   string            `json:"name"`
			Type   string            `json:"type"`
			Labels map[string]string `json:"labels"`
			Config struct {
				DisplayNameFromDS string `json:"displayNameFromDS"`
			} `json:"config"`
		} `json:"fields"`
	} `json:"schema"`
	Data struct {
		Values [][]any `json:"values"`
	} `json:"data"`
}

// DSQuery is one query of a /api/ds/query request, as a panel's target.
type DSQuery struct {
	RefID        string `json:"refId"`
	Datasource   DSRef  `json:"datasource"`
	Query        string `json:"query"`
	RawQuery     bool   `json:"rawQuery"`
	ResultFormat string `json:"resultFormat"`
	Alias        string `json:"alias,omitempty"`
	IntervalMs   int64  `json:"intervalMs"`
	MaxDataPts   int    `json:"maxDataPoints"`
}

// QueryResult is the answer for one refId.
type QueryResult struct {
	Error  string  `json:"error"`
	Frames []Frame `json:"frames"`
}

// DSQuery runs queries through Grafana's data source API between from and to, as a panel
// does: Grafana itself interpolates $timeFilter and $__interval and talks to InfluxDB.
func (g *GrafanaServer) DSQuery(ctx context.Context, from, to time.Time, qs ...DSQuery) (map[string]QueryResult, error) {
	body := map[string]any{
		"from":    fmt.Sprint(from.UnixMilli()),
		"to":      fmt.Sprint(to.UnixMilli()),
		"queries": qs,
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL()+"/api/ds/query", bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST /api/ds/query: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("POST /api/ds/query: %w", err)
	}
	// a query that failed answers 400 with the same body, its error in results[refId].error
	var out struct {
		Results map[string]QueryResult `json:"results"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Results == nil {
		return nil, fmt.Errorf("POST /api/ds/query: %s: %s", resp.Status, bytes.TrimSpace(raw))
	}
	return out.Results, nil
}

// Rows is the number of values in a frame's first field.
func (f *Frame) Rows() int {
	if len(f.Data.Values) == 0 {
		return 0
	}
	return len(f.Data.Values[0])
}

// GrafanaStatePath is where the native Grafana's state (pid, address) is kept, beside InfluxDB's.
func GrafanaStatePath(runDir string) string { return filepath.Join(runDir, "grafana", "state.json") }

// LoadGrafanaState reads the native Grafana's state; (nil, nil) when there is none.
func LoadGrafanaState(runDir string) (*GrafanaServer, error) {
	data, err := os.ReadFile(GrafanaStatePath(runDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	g := &GrafanaServer{}
	if err := json.Unmarshal(data, g); err != nil {
		return nil, fmt.Errorf("parse %s: %w (remove it if Grafana is not running)", GrafanaStatePath(runDir), err)
	}
	return g, nil
}

// SaveGrafanaState writes it.
func SaveGrafanaState(runDir string, g *GrafanaServer) error {
	data, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(GrafanaStatePath(runDir), data, 0o644)
}

// PageProblems reads the DOM of a dashboard as Grafana 9.x renders it and lists what a user
// would see wrong: a panel whose corner shows an error, a panel that says "No data", a table
// column with no value in any row shown. Panels are the elements labelled "<title> panel".
func PageProblems(dom string) []string {
	doc, err := html.Parse(strings.NewReader(dom))
	if err != nil {
		return []string{"the page is not HTML: " + err.Error()}
	}
	var problems []string
	panels := 0
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if label := attr(n, "aria-label"); n.Type == html.ElementNode && strings.HasSuffix(label, " panel") {
			panels++
			problems = append(problems, panelProblems(strings.TrimSuffix(label, " panel"), n)...)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if panels == 0 {
		problems = append(problems, "no panel rendered (did the dashboard load?)")
	}
	return problems
}

func panelProblems(title string, panel *html.Node) []string {
	var problems []string
	find(panel, func(n *html.Node) bool {
		if strings.Contains(attr(n, "class"), "panel-info-corner--error") {
			problems = append(problems, fmt.Sprintf("panel %q shows an error", title))
		}
		if n.Type == html.TextNode && strings.TrimSpace(n.Data) == "No data" {
			problems = append(problems, fmt.Sprintf("panel %q says No data", title))
		}
		if attr(n, "role") == "table" {
			problems = append(problems, tableProblems(title, n)...)
			return true // a table's own cells are read by tableProblems
		}
		return false
	})
	return problems
}

// tableProblems: a column whose every rendered row is empty.
func tableProblems(title string, table *html.Node) []string {
	var headers []string
	var rows [][]string
	find(table, func(n *html.Node) bool {
		if attr(n, "role") == "columnheader" {
			headers = append(headers, text(n))
			return true
		}
		if attr(n, "role") == "row" && attr(n, "aria-label") != "table header" {
			var cells []string
			find(n, func(c *html.Node) bool {
				if attr(c, "role") == "cell" {
					cells = append(cells, text(c))
					return true
				}
				return false
			})
			if len(cells) > 0 {
				rows = append(rows, cells)
			}
			return true
		}
		return false
	})
	if len(rows) == 0 {
		return []string{fmt.Sprintf("table %q has no row", title)}
	}
	var problems []string
	for i, h := range headers {
		empty := true
		for _, r := range rows {
			if i < len(r) && r[i] != "" {
				empty = false
				break
			}
		}
		if empty {
			problems = append(problems, fmt.Sprintf("table %q: column %q is empty in all %d rows shown", title, h, len(rows)))
		}
	}
	return problems
}

// find calls f on n and its descendants, depth first; f returning true skips the node's
// children.
func find(n *html.Node, f func(*html.Node) bool) {
	if f(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		find(c, f)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	var b strings.Builder
	find(n, func(c *html.Node) bool {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
		return false
	})
	return strings.TrimSpace(b.String())
}

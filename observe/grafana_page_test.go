package observe

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPageProblems(t *testing.T) {
	t.Parallel()
	panel := func(title, inner string) string {
		return `<section aria-label="` + title + ` panel"><header>` + title + `</header>` + inner + `</section>`
	}
	table := func(header []string, rows ...[]string) string {
		var b strings.Builder
		b.WriteString(`<div role="table"><div role="row" aria-label="table header">`)
		for _, h := range header {
			b.WriteString(`<div role="columnheader"><div>` + h + `</div></div>`)
		}
		b.WriteString(`</div>`)
		for _, r := range rows {
			b.WriteString(`<div role="row">`)
			for _, c := range r {
				b.WriteString(`<div role="cell"><div>` + c + `</div></div>`)
			}
			b.WriteString(`</div>`)
		}
		return b.String() + `</div>`
	}
	tests := []struct {
		name, dom string
		want      []string // each a part of one problem, in order
	}{
		{"a drawn graph", panel("RPS", `<canvas></canvas>`), nil},
		{"no panel at all", `<div>Loading</div>`, []string{"no panel rendered"}},
		{"No data", panel("RPS", `<div>No data</div>`), []string{`"RPS" says No data`}},
		{"an error corner", panel("RPS", `<div class="panel-info-corner panel-info-corner--error"></div><canvas></canvas>`), []string{`"RPS" shows an error`}},
		{"a full table", panel("T", table([]string{"target", "p50 ms"}, []string{"nginx", "0.5"}, []string{"direct", ""})), nil},
		{"an empty column", panel("T", table([]string{"target", "p50 ms"}, []string{"nginx", ""}, []string{"direct", ""})), []string{`column "p50 ms" is empty in all 2 rows`}},
		{"a table without rows", panel("T", table([]string{"target"})), []string{`"T" has no row`}},
	}
	for _, tt := range tests {
		got := PageProblems("<html><body>" + tt.dom + "</body></html>")
		if len(got) != len(tt.want) {
			t.Errorf("%s: %q, want %d problems like %q", tt.name, got, len(tt.want), tt.want)
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: problem %q lacks %q", tt.name, got[i], w)
			}
		}
	}
}

func TestFindGrafana(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{"bin", "conf"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) {
		if err := os.WriteFile(filepath.Join(home, p), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GRAFANA_HOME", home)
	if _, err := FindGrafana(); err == nil || !strings.Contains(err.Error(), "conf/defaults.ini") {
		t.Errorf("a home without conf/defaults.ini: %v", err)
	}
	write("conf/defaults.ini")
	if _, err := FindGrafana(); err == nil || !strings.Contains(err.Error(), "bin/grafana-server") {
		t.Errorf("a home without a binary: %v", err)
	}
	tests := []struct {
		bin  string
		argv []string
	}{
		{"grafana-server", []string{"--homepath", home}},    // 9.x
		{"grafana", []string{"server", "--homepath", home}}, // 10.x onwards: the one binary
	}
	for _, tt := range tests {
		_ = os.Remove(filepath.Join(home, "bin", "grafana-server"))
		write(filepath.Join("bin", tt.bin))
		g, err := FindGrafana()
		if err != nil {
			t.Fatalf("%s: %v", tt.bin, err)
		}
		if argv := g.argv(); argv[0] != filepath.Join(home, "bin", tt.bin) || !slices.Equal(argv[1:], tt.argv) {
			t.Errorf("%s: argv %v, want %v", tt.bin, argv, tt.argv)
		}
	}
	t.Setenv("GRAFANA_HOME", "")
	t.Setenv("PATH", t.TempDir())
	if _, err := FindGrafana(); err == nil || !strings.Contains(err.Error(), "no Grafana installed") {
		t.Errorf("nothing installed: %v", err)
	}
}

func TestGrafanaEnvProvisionsFromTheRepository(t *testing.T) {
	t.Parallel()
	env, err := GrafanaEnv("/repo", "/run/grafana", "127.0.0.1:3001", "http://127.0.0.1:8086")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"GF_PATHS_PROVISIONING=/repo/dashboards/provisioning", "DASHBOARDS_DIR=/repo/dashboards/definitions",
		"INFLUXDB_URL=http://127.0.0.1:8086", "GF_SERVER_HTTP_ADDR=127.0.0.1", "GF_SERVER_HTTP_PORT=3001",
		"GF_AUTH_ANONYMOUS_ENABLED=true", "GF_AUTH_ANONYMOUS_ORG_ROLE=Viewer", "GF_PATHS_DATA=/run/grafana/data",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("GrafanaEnv lacks %s: %v", want, env)
		}
	}
	if _, err := GrafanaEnv("/repo", "/d", "3000", ""); err == nil {
		t.Error("an address without a host: no error")
	}
}

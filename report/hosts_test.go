package report

import (
	"strings"
	"testing"
)

// Apart (make bench STACK=…), the report says which host ran what and drops the shared CPUs.
func TestShareLineOfTwoHosts(t *testing.T) {
	t.Parallel()
	b := New("t", "smoke", map[string]any{"cpus": float64(2), "pinning": "none: the load on loadbox (2 CPUs), the stack on 192.0.2.10 (CPUs: 8)", "hosts": map[string]any{
		"load":  map[string]any{"name": "loadbox", "cpus": float64(2), "ran": "k6"},
		"stack": map[string]any{"address": "192.0.2.10", "cpus": float64(8), "ran": "the targets and the upstream"},
	}})
	line := shareLine(b)
	for _, want := range []string{"The load on loadbox (k6; CPUs: 2), the stack on 192.0.2.10 (the targets and the upstream; CPUs: 8)", "did not share CPUs"} {
		if !strings.Contains(line, want) {
			t.Errorf("share line %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "share 2 CPUs") {
		t.Errorf("share line %q keeps the one machine's caveat", line)
	}
	var rows []string
	for _, r := range runDetails(b).Rows {
		rows = append(rows, strings.Join(r.Cells, ": "))
	}
	details := strings.Join(rows, "\n")
	if !strings.Contains(details, "Stack host: 192.0.2.10") || strings.Contains(details, "CPUs shared by") {
		t.Errorf("run details:\n%s\nwant the stack host, no shared CPUs", details)
	}
	if !strings.HasPrefix(shareLine(New("t", "smoke", map[string]any{"cpus": float64(2)})), "Client, proxies and upstream share 2 CPUs") {
		t.Error("one machine: the shared CPUs' caveat is gone")
	}
}

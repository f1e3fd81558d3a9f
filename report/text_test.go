package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestTextThroughput prints the synthetic bench's throughput tables for the terminal: the same
// medians, CVs, valid runs and fractions of direct as report.md, aligned, and nothing of the
// other tables.
func TestTextThroughput(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := Text(&buf, synthBench()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	space := regexp.MustCompile(` +`)
	flat := space.ReplaceAllString(out, " ")
	for _, want := range []string{
		"== Reused-connection throughput (testid synth-1, median over the valid runs)",
		"== Fresh-connection throughput (testid synth-1, median over the valid runs)",
		// 10000, 11000, 9000 → median 10,000, CV 10.0 (as TestMarkdownRows works out)
		" HTTP/1.1 TLS direct 10,000 10.0 3/3 baseline 0.30 1.00 0.3 yes, client-bound\n",
		"Compare HTTP/3 with HTTP/3 only",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	for _, not := range []string{"Resources", "Equal-load", "Run details"} {
		if strings.Contains(out, not) {
			t.Errorf("%q is not a throughput table, yet printed:\n%s", not, out)
		}
	}
}

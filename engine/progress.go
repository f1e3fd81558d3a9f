package engine

import (
	"fmt"
	"io"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/runner"
)

// step prints the progress line of the next run.
func (b *Bench) step(j Job) {
	b.done++
	progress(b.Stderr, b.done, b.total, j.Job, j.Runs, b.t0)
}

// progress prints run i of n: what runs, the time so far and the time left at the pace so far.
func progress(w io.Writer, i, n int, j runner.Job, runs int, t0 time.Time) {
	el := time.Since(t0)
	eta := "–"
	if i > 1 {
		eta = fmtDur(time.Duration(float64(el) / float64(i-1) * float64(n-i+1)))
	}
	proto := j.Proto
	if proto == "" {
		proto = j.Requires()
	}
	if j.Body != nil {
		proto += " " + result.SizeLabel(int(j.Body.Bytes))
	}
	run := max(j.Run, 1)
	fmt.Fprintf(w, "\n[%d/%d] %s %s %s run %d/%d  elapsed %s  ETA %s\n", i, n, j.Scenario, proto, j.Target, run, runs, fmtDur(el), eta)
}

func fmtDur(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%dm%02ds", s/60, s%60)
}

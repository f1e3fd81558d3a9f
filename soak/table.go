package soak

import (
	"fmt"
	"io"
	"math"
	"strconv"
)

// figures is a verdict in words: baseline → end, growth, bound.
func figures(v Verdict) string {
	if v.Why != "" {
		return v.Why
	}
	num := func(x float64) string { return fmt.Sprintf("%.1f MiB", x) }
	if v.Bound.Metric == "fds" {
		// a median of an even count may end in .5: shown as it is, never rounded to "-0"
		num = func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) + " fds" }
	}
	verb := "within"
	if !v.OK {
		verb = "beyond"
	}
	return fmt.Sprintf("%s → %s, %s%s, %s its bound of +%s (%s)",
		num(v.Baseline), num(v.End), sign(v.Growth), num(v.Growth), verb, num(v.Bound.Allowed), v.Bound.Rule)
}

func sign(x float64) string {
	if x >= 0 {
		return "+"
	}
	return ""
}

// rows are the samples printed: each one for a short run, else one per minute (the first
// sample of each minute) and the last.
func rows(samples []Sample) []Sample {
	if len(samples) == 0 || samples[len(samples)-1].T < 3*60 {
		return samples
	}
	var out []Sample
	next := 0.0
	for i, s := range samples {
		if s.T >= next || i == len(samples)-1 {
			out = append(out, s)
			next = math.Floor(s.T/60)*60 + 60
		}
	}
	return out
}

func printTable(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "\nsoak %s: %s against %s for %s minutes (profile %s, testid %s)\n", rep.Scenario, rep.Proto, rep.Target,
		minutesText(rep.Minutes), rep.Profile, rep.TestID)
	fmt.Fprintf(w, "%8s", "time")
	for _, p := range rep.Processes {
		fmt.Fprintf(w, "  %14s %6s", p.Name+" RSS MiB", "fds")
	}
	fmt.Fprintln(w)
	for _, s := range rows(rep.Samples) {
		t := int(s.T)
		mark := " "
		if rep.Window != nil && !rep.Window.holds(s.T) {
			mark = "*" // outside the measured window: k6's start, warm-up or summary
		}
		fmt.Fprintf(w, "%s%7s", mark, fmt.Sprintf("%d:%02d", t/60, t%60))
		for _, p := range rep.Processes {
			if u := s.Procs[p.Role]; u != nil {
				fmt.Fprintf(w, "  %14.1f %6d", float64(u.RSSBytes)/mib, u.FDs)
			} else {
				fmt.Fprintf(w, "  %14s %6s", "–", "–")
			}
		}
		fmt.Fprintln(w)
	}
	if rep.Window != nil {
		b, e := rep.Window.baseline(), rep.Window.end()
		fmt.Fprintf(w, "* outside the measured load (k6 start-up, warm-up, summary). Baseline: median of %s–%s, end: median of %s–%s; k6 %.0f req/s\n",
			clock(b.From), clock(b.To), clock(e.From), clock(e.To), rep.RPS)
	}
	fmt.Fprintf(w, "bounds: k6 RSS +%.0f MiB + %.0f MiB per million requests (its trend samples, kept for the summary by design: ~%.0f MiB per million measured); "+
		"target and upstream RSS +%.0f MiB + %.0f%% of the baseline; every process +%d open descriptors\n",
		k6SlackMiB, k6MiBPerMillion, k6MeasuredMiBPerMillion, procRSSSlackMiB, procRSSGrowth*100, fdSlack)
	if len(rep.Verdict) == 0 {
		fmt.Fprintf(w, "no verdict: %s\n", rep.Error)
		return
	}
	for _, v := range rep.Verdict {
		ok := "ok"
		if !v.OK {
			ok = "FAIL"
		}
		metric := "RSS"
		if v.Bound.Metric == "fds" {
			metric = "fds"
		}
		fmt.Fprintf(w, "  %-10s %-3s  %s  %s\n", v.Name, metric, figures(v), ok)
	}
}

func clock(s float64) string {
	t := int(math.Round(s))
	return fmt.Sprintf("%d:%02d", t/60, t%60)
}

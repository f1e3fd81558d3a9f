package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// checkAlive is what follows a run whose upstream or target died, was stopped (SIGSTOP) or,
// for the target, held the run past RUN_TIMEOUT: the run is invalid, with the end of that
// one's log; a proxy is started again (verified) for its next runs, or left out of them if it
// will not start; the upstream's death or stop ends the bench (b.fatal), since every other
// figure would be measured against nothing.
func (b *Bench) checkAlive(ctx context.Context, j runner.Job, res *result.Result) {
	// the upstream first: a proxy's run cut off because the upstream hung is the upstream's fault
	for _, n := range slices.Compact([]string{stack.Direct, j.Target}) {
		pid := b.PIDs[n]
		if pid == 0 {
			continue
		}
		what, gone := b.Targets.Check(n, pid)
		if what == "" && res.TimedOut && n == j.Target {
			what, gone = "did not let the run end within RUN_TIMEOUT", false
		}
		if what == "" {
			continue
		}
		log, tail := b.Targets.Log(n)
		why := fmt.Sprintf("%s (pid %d) %s; the end of %s: %s", n, pid, what, log,
			strings.ReplaceAll(stack.LastLines(tail, 5), "\n", " | "))
		path, _ := b.Runner.ResultPath(b.TestID, j)
		if err := result.MarkInvalid(res, path, why); err != nil {
			fmt.Fprintf(b.Stderr, "warning: %s: %v\n", path, err)
		}
		fmt.Fprintf(b.Stderr, "bench: %s\n", why)
		if n == stack.Direct && gone {
			b.fatal = fmt.Errorf("the upstream (direct, pid %d) %s (%s %s): the bench stopped, as no figure means anything without it (its log: %s)", pid, what, j.Scenario, j.Target, log)
			return
		}
		newPID, err := b.Targets.Restart(ctx, n)
		if err != nil {
			b.Served.Missing[n] = stack.LabelNotVerified + ": " + what + " and did not start again: " + stack.FirstLine(err.Error())
			fmt.Fprintf(b.Stderr, "bench: %s is left out of its other runs: %v\n", n, err)
			continue
		}
		b.PIDs[n] = newPID
		fmt.Fprintf(b.Stderr, "bench: %s started again (pid %d) for its next runs\n", n, newPID)
	}
}

// Package engine runs a plan of k6 runs against the stack's targets: each cell in turn, the
// targets checked alive after each run, every run recorded (its result file, bench.json,
// InfluxDB), and the report written at the end. cmd/proxybench builds a Bench from its flags;
// the targets and the runner are interfaces, so that a unit test drives it with a fake stack.
package engine

import (
	"context"
	"io"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/observe"
	"github.com/proxybench/proxybench/report"
	"github.com/proxybench/proxybench/runner"
)

// Targets is what the engine needs of the running targets besides what they serve.
type Targets interface {
	// Check says what became of name's process pid during a run: "" while it still runs;
	// gone when it died or was stopped, not only slow.
	Check(name string, pid int) (what string, gone bool)
	// Restart starts name again, verified, and returns its new pid.
	Restart(ctx context.Context, name string) (pid int, err error)
	// Log is the path of name's log and its last lines.
	Log(name string) (path, tail string)
}

// Runner runs one k6 run, or records why a cell is not run.
type Runner interface {
	Skipper
	// Sampled runs j with the CPU of the target's process tree (pid target), the upstream's
	// and the client's sampled.
	Sampled(ctx context.Context, testid string, j runner.Job, target, upstream int) (*result.Result, *sample.Resources)
	// ResultPath is where j's result file is.
	ResultPath(testid string, j runner.Job) (string, error)
}

// Points is where each run's resources, each capacity step and each sweep's point go beside
// k6's own points (InfluxDB).
type Points interface {
	Write(ctx context.Context, r *result.Result, res *sample.Resources, at time.Time) error
	WriteStep(ctx context.Context, s observe.CapacityStep, at time.Time) error
	WriteSweep(ctx context.Context, p observe.SweepPoint, at time.Time) error
}

// Bench is one `proxybench bench`: what it runs against, and the saved run being built.
type Bench struct {
	TestID  string
	Dir     string // the results folder: the result files and bench.json
	Profile string
	Targets Targets
	Runner  Runner
	Served  Served
	PIDs    map[string]int // by target, direct's included: what Sampled and Check are given
	Report  *report.Bench
	// Save keeps the report as it stands (bench.json in Dir); a test gives a failing one.
	Save func(*report.Bench) error
	// Points gets each run's resources; nil: none.
	Points Points
	// Dashboard keeps k6's web dashboard export of every run beside its result.
	Dashboard bool
	// Restart: every run on a freshly started process. Its first too: restarting the upstream
	// (direct's runs) breaks the proxies' pooled connections to it, which no proxy's run may meet.
	Restart bool
	// Stdout gets the tables and the report's text; Stderr the progress and warnings.
	Stdout, Stderr io.Writer

	// Results are every run, for the exit status.
	Results []*result.Result
	tables  []*result.Result // run 1 of each cell, for the tables
	// progress: runs started so far, of total (the matrix and the equal-load pass), since t0
	done, total int
	t0          time.Time
	// fatal ends the bench after the run in progress: the upstream died (checkAlive).
	fatal error
	// finished: every run ended before any signal came
	finished   bool
	saveWarned bool // checkpoint's
}

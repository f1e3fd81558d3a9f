package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// thresholdsFailed is k6's exit code when a threshold fails: the run happened and wrote its
// result, which says why it is invalid.
const thresholdsFailed = 99

// Runner runs scenarios with the project's own k6.
type Runner struct {
	K6           string   // bin/k6
	ScenariosDir string   // scenarios/
	ResultsDir   string   // results/
	TargetsFile  string   // passed to the scripts as TARGETS_FILE
	CAFile       string   // trusted through SSL_CERT_FILE: certificates are verified, never skipped
	Profile      string   // smoke, stable, stress
	ExtraArgs    []string // passed to `k6 run` as they are
	Stdout       io.Writer
	Stderr       io.Writer
}

// Job is one cell: a scenario against one target, and for probes the protocol.
type Job struct {
	Scenario string
	Target   string
	Proto    string // probes only: h1, h1c, h2
}

func (j Job) name() string {
	if j.Proto != "" {
		return j.Scenario + "-" + j.Proto + "-" + j.Target
	}
	return j.Scenario + "-" + j.Target
}

// h1OverTLS tells whether the cell must keep Go's HTTP client from negotiating h2.
func (j Job) h1OverTLS() bool {
	return strings.HasSuffix(j.Scenario, "-h1") || j.Proto == "h1"
}

// Env is the environment k6 runs with. k6 must never reach the internet.
func (r *Runner) Env(testid string, j Job, summary string) []string {
	env := append(os.Environ(),
		"K6_NO_USAGE_REPORT=true",
		"K6_AUTO_EXTENSION_RESOLUTION=false",
		"SSL_CERT_FILE="+r.CAFile,
		"TARGET="+j.Target,
		"TESTID="+testid,
		"SUMMARY_JSON="+summary,
	)
	if r.TargetsFile != "" {
		env = append(env, "TARGETS_FILE="+r.TargetsFile)
	}
	if r.Profile != "" {
		env = append(env, "PROFILE="+r.Profile)
	}
	if j.Proto != "" {
		env = append(env, "PROTO="+j.Proto)
	}
	if j.h1OverTLS() {
		// Go's client offers h2 by ALPN unless told not to; k6 has no per-request switch.
		env = append(env, "GODEBUG=http2client=0")
	}
	return env
}

// Run runs one cell and returns its result. A run whose thresholds failed still returns its
// result (marked invalid by the script); a run that produced none returns a Result with Err.
func (r *Runner) Run(ctx context.Context, testid string, j Job) *Result {
	dir := filepath.Join(r.ResultsDir, testid)
	summary, err := filepath.Abs(filepath.Join(dir, j.name()+".json"))
	fail := func(err error) *Result {
		return &Result{TestID: testid, Scenario: j.Scenario, Target: j.Target, Proto: j.Proto, Err: err.Error()}
	}
	if err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	_ = os.Remove(summary)
	script := filepath.Join(r.ScenariosDir, j.Scenario+".js")
	if _, err := os.Stat(script); err != nil {
		return fail(fmt.Errorf("unknown scenario %q: %w", j.Scenario, err))
	}
	args := append([]string{"run", "--tag", "testid=" + testid}, r.ExtraArgs...)
	args = append(args, script)
	cmd := exec.CommandContext(ctx, r.K6, args...)
	cmd.Env = r.Env(testid, j, summary)
	cmd.Stdout, cmd.Stderr = r.Stdout, r.Stderr
	runErr := cmd.Run()
	var exit *exec.ExitError
	if runErr != nil && !(errors.As(runErr, &exit) && exit.ExitCode() == thresholdsFailed) {
		if res, err := LoadResult(summary); err == nil {
			res.Err = fmt.Sprintf("k6 exited: %v", runErr)
			return res
		}
		return fail(fmt.Errorf("k6 run %s (target %s): %w", j.Scenario, j.Target, runErr))
	}
	res, err := LoadResult(summary)
	if err != nil {
		return fail(fmt.Errorf("k6 run %s (target %s) wrote no result: %w", j.Scenario, j.Target, err))
	}
	return res
}

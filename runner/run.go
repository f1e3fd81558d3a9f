// Package runner runs k6 scenarios against targets, one k6 process per target (or several for
// a split run), samples what each run cost, and prints the results side by side.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/scenarios"
	"github.com/proxybench/proxybench/settings"
	"github.com/proxybench/proxybench/stack"
	"github.com/proxybench/proxybench/verdict"
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
	// Client is ClientNative (the reused h1c, h1 and h2 cells run scenarios/native/) or
	// ClientK6 (every cell runs its k6/http script); empty is ClientNative.
	Client string
	// ClientPrefix runs k6 under it (`taskset -c 0-3`: pinned), and ClientCPUs are then the
	// CPUs that gives k6, which its CPU use is measured against. Both unset: unpinned.
	ClientPrefix []string
	ClientCPUs   []int
	// UpstreamAddr (host:port of the upstream's cleartext listener) has every run record the
	// connections the upstream accepted during it (UpstreamConns); empty: not recorded. Read
	// when Stack is nil.
	UpstreamAddr string
	// Stack is the stack's side when it runs on another host (Remote); nil: this machine
	// (Local, at UpstreamAddr).
	Stack Side
	// UpstreamPID is the upstream's pid: its CPU is the run's own, not outside load (Resources).
	UpstreamPID int
	// TargetPIDs are the local targets' pids, by name: Run samples the runs of those it knows
	// as RunSampled does, so that every result says whether the machine was busy beside it.
	TargetPIDs map[string]int
	// OfferedStreams, when set, reads the concurrent streams per connection a target offers
	// over h2 or h3 before each such run, for the verdict to hold the plan's streams to.
	OfferedStreams func(ctx context.Context, target string, proto stack.Protocol) (float64, error)
	// Negotiated is what each target's TLS protocols negotiated when the stack verified them
	// (stack.Running.TLS): every run over TLS records its target's in its result.
	Negotiated map[string]map[stack.Protocol]*stack.Negotiated
	// Timeout cuts off a k6 run that has not ended within it (0: none). k6 bounds a run itself,
	// but only by its executors' maxDuration (10 minutes) and request timeouts, and a stopped
	// or wedged target can hold an extension's connection for longer.
	Timeout time.Duration
	// Command is k6's subcommand and its flags; empty is run (`cloud run --local-execution`
	// streams the same run to k6 cloud).
	Command []string
	// Segments splits each cell RunSegments runs over that many k6 instances (SEGMENTS); 0 or
	// 1 is one.
	Segments int
	// Launcher, when set, runs those instances instead of this machine (the k6-operator's
	// runners); nil: k6 processes here.
	Launcher Launcher
	// OnStart, when set, is told k6's pid as soon as k6 runs (soak follows its memory).
	OnStart func(pid int)
	Stdout  io.Writer
	Stderr  io.Writer
}

// ScriptEnv are the variables the scripts read: the settings they read (package settings: a
// setting added there with Script is passed on) and those the runner sets itself
// (TestScriptEnvIsComplete holds the list to the scripts).
var ScriptEnv = append(settings.Names(func(s settings.Setting) bool { return s.Script }),
	"TARGETS_FILE", "SUMMARY_JSON", "RATE", "BODY_BYTES", "SWEEP_POINT", "GODEBUG", "PWD")

// LocalEnv are the ScriptEnv variables about this machine: its paths, the local split and
// its own k6's Go runtime. A k6 elsewhere (k6 cloud, a Kubernetes runner) is not given them.
var LocalEnv = append(settings.Names(func(s settings.Setting) bool { return s.Script && s.Local }),
	"TARGETS_FILE", "SUMMARY_JSON", "PWD", "GODEBUG")

// ScriptFlags are env's values of ScriptEnv as k6's -e flags: `k6 cloud run` shows a script
// only those, not the process environment (which it would upload, secrets and all, with
// --include-system-env-vars).
func ScriptFlags(env []string) []string {
	var flags []string
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); v != "" && slices.Contains(ScriptEnv, k) {
			flags = append(flags, "-e", kv)
		}
	}
	return flags
}

// command is k6's subcommand and flags for a run in env.
func (r *Runner) command(env []string) []string {
	if len(r.Command) == 0 {
		return []string{"run"}
	}
	if r.Command[0] == "cloud" {
		return append(slices.Clone(r.Command), ScriptFlags(env)...)
	}
	return r.Command
}

// Job is one cell: a scenario against one target, and for probes the protocol.
type Job struct {
	Scenario string
	// Entry is the scenario's catalogue entry (its mode, route, protocols), resolved once where
	// the job is made (JobOf) or when it is run, and read from then on.
	Entry  scenarios.Scenario
	Target string
	Proto  string // probes and equal-load: h1, h1c, h2, h3
	// Run is the repeat number of a cell run more than once: run 1 (or 0) writes
	// <name>.json, run N > 1 <name>.runN.json, beside it.
	Run int
	// Env is added to k6's environment (RATE=… for equal-load, the web dashboard's variables).
	Env []string
	// Dir is a folder under the run's results for the job's file, apart from the cells' (a
	// capacity search's steps: CapacityDir); "" for a cell's own run.
	Dir string
	// Body is the point of the body-size sweep a job of mode bodies runs (its direction and
	// size: BODY_BYTES in its environment, the size in its file's name), nil for any other.
	Body *result.Body
}

// JobOf is a job of the catalogue's scenario s.
func JobOf(s scenarios.Scenario, target, proto string) Job {
	return Job{Scenario: s.Name, Entry: s, Target: target, Proto: proto}
}

// resolved is j with its catalogue entry, looked up now when it was made without one.
func (j Job) resolved() Job {
	if j.Entry.Name != j.Scenario {
		j.Entry, _ = scenarios.Lookup(j.Scenario)
	}
	return j
}

// Mode is the mode of the job's scenario: reused, fresh, probe or equal-load.
func (j Job) Mode() string { return j.resolved().Entry.Mode }

// Requires is the protocol the job needs its target to serve: the probe's PROTO, or the one a
// throughput scenario runs over (reused-h3 → h3).
func (j Job) Requires() string {
	if j.Proto != "" {
		return j.Proto
	}
	if e := j.resolved().Entry; len(e.Protos) == 1 {
		return e.Protos[0]
	}
	return ""
}

// K6Scenario is the name of the job's measured k6 scenario (K6Scenario).
func (j Job) K6Scenario() string { return k6Scenario(j.resolved().Entry, j.Proto) }

func (j Job) name() string {
	n := j.Scenario + "-" + j.Target
	switch {
	case j.Body != nil:
		n = j.Scenario + "-" + j.Proto + "-" + result.SizeLabel(int(j.Body.Bytes)) + "-" + j.Target
	case j.Proto != "":
		n = j.Scenario + "-" + j.Proto + "-" + j.Target
	}
	if j.Run > 1 {
		n += fmt.Sprintf(".run%d", j.Run)
	}
	return n
}

// ResultPath is the absolute path of the result file the cell writes.
func (r *Runner) ResultPath(testid string, j Job) (string, error) {
	return filepath.Abs(filepath.Join(r.ResultsDir, testid, j.Dir, j.name()+".json"))
}

// H1OverTLS tells whether the cell must keep Go's HTTP client from negotiating h2.
func (j Job) H1OverTLS() bool {
	return strings.HasSuffix(j.Scenario, "-h1") || j.Proto == "h1"
}

// Env is the environment k6 runs with. k6 must never reach the internet.
func (r *Runner) Env(testid string, j Job, summary string) []string {
	// SEGMENTS tells a script it is one part of a split run, whose totals the runner judges:
	// only RunSegments may say so, never a value left in the caller's environment
	inherited := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "SEGMENTS=") })
	env := append(inherited,
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
	if j.Body != nil {
		env = append(env, fmt.Sprintf("BODY_BYTES=%.0f", j.Body.Bytes))
	}
	if g := r.godebug(j); len(g) > 0 {
		env = append(env, "GODEBUG="+strings.Join(g, ","))
	}
	return append(env, j.Env...)
}

// godebug is what k6's Go runtime is told for a cell:
//   - http2client=0 for HTTP/1.1 over TLS: Go's client offers h2 by ALPN unless told not to,
//     and k6 has no per-request switch;
//   - tlsmlkem=0 when the target's TLS negotiated a classical group (the x25519 profile): Go's
//     client otherwise makes an ML-KEM-768 key share for every handshake, besides the X25519
//     one the target picks, and throws it away. Work only the client does, on every fresh
//     connection (8% of k6's CPU in fresh-h2): the target's handshake is the same either way.
func (r *Runner) godebug(j Job) []string {
	var g []string
	if j.H1OverTLS() {
		g = append(g, "http2client=0")
	}
	if n := r.Negotiated[j.Target][stack.Protocol(j.Requires())]; n != nil && n.Group != "" && !strings.Contains(strings.ToUpper(n.Group), "MLKEM") {
		g = append(g, "tlsmlkem=0")
	}
	return g
}

// Run runs one cell and returns its result, its target sampled when TargetPIDs has it. A run
// whose thresholds failed still returns its result (marked invalid by the script); a run that
// produced none returns a Result with Err.
func (r *Runner) Run(ctx context.Context, testid string, j Job) *result.Result {
	res, _ := r.RunSampled(ctx, testid, j, r.TargetPIDs[j.Target])
	return res
}

// Failed is the result of a run that measured nothing: err says why. It is invalid, and filed
// under its scenario's mode like any other run, so that its cell keeps its row.
func Failed(testid string, j Job, err error) *result.Result {
	return &result.Result{TestID: testid, Scenario: j.Scenario, Mode: j.Mode(), Target: j.Target, Proto: j.Proto, Body: j.Body, Err: err.Error()}
}

// RunSampled runs one cell as Run does and, when targetPID > 0, samples what it cost while k6
// ran (StartSampler: the target's process tree from targetPID, and k6's own CPU from its pid
// and exit status), with the target's CPU per request over every request k6 sent
// (AllRequests). Resources are nil when there was no target pid, the sampler could not start
// (a warning goes to Stderr) or k6 wrote no result to count requests from.
func (r *Runner) RunSampled(ctx context.Context, testid string, j Job, targetPID int) (*result.Result, *sample.Resources) {
	j = j.resolved()
	fail := func(err error) *result.Result { return Failed(testid, j, err) }
	summary, script, err := r.prepare(testid, j, "")
	if err != nil {
		return fail(err), nil
	}
	// No --tag testid=…: a CLI tag replaces the script's options.tags (target, mode, …), and the
	// scripts already tag testid from TESTID.
	env := r.Env(testid, j, summary)
	argv := append(append(append(slices.Clone(r.ClientPrefix), r.K6), r.command(env)...), r.ExtraArgs...)
	argv = append(argv, script)
	runCtx, cancel := r.runContext(ctx)
	defer cancel()
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = r.Stdout, r.Stderr
	// Stdout may be a pipe (a writer that is not a file): once k6 is killed, its output is not
	// waited for longer than this.
	cmd.WaitDelay = 5 * time.Second
	// a controller killed outright (kill -9) takes its k6 with it: no load without a runner
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var sampler Sampling
	if targetPID > 0 {
		if sampler, err = r.StackSide().Sample(ctx, j.Target, targetPID, r.UpstreamPID); err != nil {
			fmt.Fprintf(r.Stderr, "warning: %s %s: no resource figures: %v\n", j.Scenario, j.Target, err)
		}
	}
	watched := r.watchRun(ctx, j)
	runErr := cmd.Start()
	if runErr == nil {
		if r.OnStart != nil {
			r.OnStart(cmd.Process.Pid)
		}
		if sampler != nil {
			sampler.SetClient(cmd.Process.Pid, r.ClientCPUs)
		}
		runErr = cmd.Wait()
	}
	var res *sample.Resources
	var sampled sample.Resources
	if sampler != nil {
		sampler.ClientDone(cmd.ProcessState)
		if sampled, err = sampler.Stop(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintf(r.Stderr, "warning: %s %s: no resource figures: %v\n", j.Scenario, j.Target, err)
			sampler = nil
		} else if share, over, ok := sampled.Outside(); ok {
			watched.outside = &result.OutsideLoad{CPUShare: result.Round(share, 4), Over: over}
		}
	}
	// every request k6 sent (nil: no result to count them from): what the target's CPU and the
	// upstream's connections are per
	var all *float64
	if n, err := result.AllRequests(summary); err == nil {
		all = &n
		if sampler != nil {
			sampled.PerRequest(n)
			res = &sampled
			if n > 0 && sampled.TargetCPUPerReqMicros > 0 {
				watched.cost = &result.Cost{
					TargetCPUMicros: result.Round(sampled.TargetCPUPerReqMicros, 1),
					ClientCPUMicros: result.Round(sampled.ClientCPUSeconds/n*1e6, 1),
				}
			}
			watched.targetCPU = sampled.TargetCPUSeconds
		}
	}
	if res := r.stopped(ctx, runCtx, testid, j, ""); res != nil {
		return res, nil
	}
	var exit *exec.ExitError
	if runErr != nil && (!errors.As(runErr, &exit) || exit.ExitCode() != thresholdsFailed) {
		if got, err := result.LoadResult(summary); err == nil {
			got.Err = fmt.Sprintf("k6 exited: %v", runErr)
			got.IdleCost = idleCost(ctx, sampler, got)
			r.annotate(got, j, summary, watched, all)
			return got, res
		}
		return fail(fmt.Errorf("k6 run %s (target %s): %w", j.Scenario, j.Target, runErr)), nil
	}
	got, err := result.LoadResult(summary)
	if err != nil {
		return fail(fmt.Errorf("k6 run %s (target %s) wrote no result: %w", j.Scenario, j.Target, err)), nil
	}
	got.IdleCost = idleCost(ctx, sampler, got)
	r.annotate(got, j, summary, watched, all)
	return got, res
}

// prepare readies a cell's run: the folder of its result file (and sub within it) made, a
// result left by an earlier run removed, and its script found.
func (r *Runner) prepare(testid string, j Job, sub string) (summary, script string, err error) {
	if summary, err = r.ResultPath(testid, j); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(filepath.Join(filepath.Dir(summary), sub), 0o755); err != nil {
		return "", "", err
	}
	_ = os.Remove(summary)
	script, err = r.Script(j.Scenario)
	return summary, script, err
}

// runContext bounds a run by RUN_TIMEOUT (r.Timeout), when one is set.
func (r *Runner) runContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if r.Timeout > 0 {
		return context.WithTimeout(ctx, r.Timeout)
	}
	return context.WithCancel(ctx)
}

// stopped is the result of a run the runner stopped, or nil: interrupted (ctx ended: Ctrl-C or
// SIGTERM, and whatever k6 wrote is not a whole run) or past RUN_TIMEOUT (runCtx ended). how
// says how the run was made (" split over 2 instances").
func (r *Runner) stopped(ctx, runCtx context.Context, testid string, j Job, how string) *result.Result {
	switch {
	case ctx.Err() != nil:
		return Failed(testid, j, fmt.Errorf("k6 run %s (target %s) interrupted: not measured", j.Scenario, j.Target))
	case runCtx.Err() != nil:
		res := Failed(testid, j, fmt.Errorf("k6 run %s (target %s)%s had not ended after RUN_TIMEOUT=%v and was stopped: "+
			"not measured (a longer run needs a larger RUN_TIMEOUT)", j.Scenario, j.Target, how, r.Timeout))
		res.TimedOut = true
		return res
	}
	return nil
}

// annotate adds to a run's result, and to its result file, what the runner knows of it and
// k6 does not: the connections the upstream accepted and the requests it answered during it,
// the concurrency its target offered and the TLS it negotiated when the stack verified it;
// then judges it (Result.Judge) and writes the verdict into the file.
func (r *Runner) annotate(got *result.Result, j Job, summary string, w *watch, all *float64) {
	add := map[string]any{}
	if n := r.Negotiated[j.Target][stack.Protocol(j.Requires())]; n != nil {
		got.TLS = n
		add["tls"] = n
	}
	if w != nil {
		w.record(got, all)
	}
	if got.UpstreamConns != nil {
		add["upstream_conns"] = got.UpstreamConns
	}
	if got.UpstreamRequests != nil {
		add["upstream_requests"] = got.UpstreamRequests
	}
	if got.OfferedStreams != nil {
		add["offered_streams"] = *got.OfferedStreams
	}
	if got.OutsideLoad != nil {
		add["outside_load"] = got.OutsideLoad
	}
	if got.Cost != nil {
		add["cost"] = got.Cost
	}
	if got.IdleCost != nil {
		add["idle_cost"] = got.IdleCost
	}
	if got.Body != nil {
		add["body"] = got.Body
	}
	got.Judge()
	add["valid"], add["invalid"], add["overload"] = got.Valid, result.NonNil(got.Invalid), got.Overload
	if got.Overload == "" {
		add["overload"] = nil
	}
	if err := result.AddToFile(summary, add); err != nil {
		fmt.Fprintf(r.Stderr, "warning: %s: %v\n", summary, err)
	}
}

// watch is what the runner reads beside a run: the upstream's counters (before and after),
// the concurrent streams per connection the target offers (before, h2 and h3), and the
// machine's outside load over it (when the run was sampled).
type watch struct {
	upstream func(requests float64, route string) upstreamSeen
	offered  *float64
	outside  *result.OutsideLoad // set once the run's sampler stopped
	cost     *result.Cost        // set once the requests are counted
	// targetCPU is the target's CPU seconds over the run, once sampled: a body-size sweep's run
	// divides it by the bytes it moved
	targetCPU float64
}

// record sets on res what the watch saw of its run, all being every request k6 sent (nil: not
// counted, and the upstream's figures not read): the upstream's connections and answers, and
// the streams the target offered.
func (w *watch) record(res *result.Result, all *float64) {
	if w.upstream != nil && all != nil {
		seen := w.upstream(*all, res.Route)
		res.UpstreamConns = seen.conns
		if seen.answered != nil && res.Counts != nil && res.Plan != nil {
			res.UpstreamRequests = verdict.NewUpstream(*seen.answered, res.Counts.Answered, res.Plan.InFlight)
		}
	}
	res.OfferedStreams = w.offered
	res.OutsideLoad = w.outside
	res.Cost = w.cost
	if res.Body != nil && all != nil {
		res.Body.TargetCPUMsPerMB = res.Body.CPUPerMB(w.targetCPU, *all)
	}
}

// watchRun starts the watch of one run of j: the target's offered streams are read first, so
// that the probe's own connection (to the upstream itself, for direct) is not counted as the run's.
func (r *Runner) watchRun(ctx context.Context, j Job) *watch {
	w := &watch{}
	if proto := stack.Protocol(j.Requires()); r.OfferedStreams != nil && (proto == stack.H2 || proto == stack.H3) {
		n, err := r.OfferedStreams(ctx, j.Target, proto)
		if err != nil {
			fmt.Fprintf(r.Stderr, "warning: %s %s: the streams per connection the target offers not read: %v\n", j.Scenario, j.Target, err)
		} else {
			w.offered = &n
		}
	}
	w.upstream = r.watchUpstream(ctx)
	return w
}

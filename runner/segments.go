package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/proxybench/proxybench/extensions/histogram"
	"github.com/proxybench/proxybench/internal/result"
)

// ParseSegments checks SEGMENTS, the number of k6 instances one run is split over; empty is 1.
func ParseSegments(v string) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || !digitsRE.MatchString(v) {
		return 0, fmt.Errorf("SEGMENTS=%q: want a whole number of at least 1, the k6 instances one run is split over (empty or 1: one instance)", v)
	}
	if n > MaxSegments {
		return 0, fmt.Errorf("SEGMENTS=%d: at most %d k6 instances on one machine", n, MaxSegments)
	}
	return n, nil
}

var digitsRE = regexp.MustCompile(`^\d+$`)

// MaxSegments bounds the instances started on this machine: each is a whole k6 process, and
// more than a few share its CPUs to no gain (load from other machines is the k6-operator's).
const MaxSegments = 64

// CheckSegments refuses what cannot be split: a probe samples with one VU, and one VU is no
// share of anything.
func CheckSegments(scenario string, n int) error {
	if n <= 1 {
		return nil
	}
	if IsProbe(scenario) || scenario == EqualLoad.Name {
		return fmt.Errorf("SEGMENTS=%d: %s runs one VU, which cannot be split over k6 instances: run it with SEGMENTS=1 (or none); reused-* and fresh-* split", n, scenario)
	}
	return nil
}

// SegmentArgs are the k6 flags of instance i (0-based) of n: its segment, and the sequence
// of all n, so that each instance takes exactly its share of VUs and iterations and the
// shares add up to the plan.
func SegmentArgs(i, n int) []string {
	seq := make([]string, n+1)
	for k := range seq {
		seq[k] = result.SegmentBound(k, n)
	}
	return []string{
		"--execution-segment", result.SegmentBound(i, n) + ":" + result.SegmentBound(i+1, n),
		"--execution-segment-sequence", strings.Join(seq, ","),
	}
}

// readyTimeout bounds how long the instances may take to initialize their VUs before all are
// resumed.
const readyTimeout = 2 * time.Minute

// statusPausedBeforeRun is k6's lib.ExecutionStatusPausedBeforeRun: VUs initialized, waiting
// for the resume. GET /v1/status says it as a number.
const statusPausedBeforeRun = 4

// segmentInstance is one running k6 of a split run.
type segmentInstance struct {
	index   int
	summary string // its result file
	hist    string // its histograms file (extensions/histout)
	api     string // its REST API, host:port
	cmd     *exec.Cmd
	done    chan struct{}
	err     error // cmd.Wait's, once done is closed
	resumed time.Time
}

// RunSegments runs one cell as n k6 instances, each an execution segment of the plan, started
// together: each is started --paused with a REST API of its own, and once every one has its
// VUs ready, each is resumed through PATCH /v1/status. Their results are merged (Merge) into
// the cell's result file, and each instance's own is kept under segments/ beside it. n ≤ 1 is
// Run, unless a Launcher runs the one instance elsewhere.
func (r *Runner) RunSegments(ctx context.Context, testid string, j Job, n int) *result.Result {
	if n <= 1 && r.Launcher == nil {
		return r.Run(ctx, testid, j)
	}
	j = j.resolved()
	fail := func(err error) *result.Result { return Failed(testid, j, err) }
	if err := CheckSegments(j.Scenario, n); err != nil {
		return fail(err)
	}
	// apart from the cells' files: `make table` and the report read every *.json of a run's
	// folder as a cell of its own
	merged, script, err := r.prepare(testid, j, SegmentsDir)
	if err != nil {
		return fail(err)
	}
	segDir := filepath.Join(filepath.Dir(merged), SegmentsDir)
	runCtx, cancel := r.runContext(ctx)
	defer cancel()

	watched := r.watchRun(ctx, j)
	var insts []*segmentInstance
	if r.Launcher != nil {
		insts, err = r.launchElsewhere(runCtx, testid, j, script, segDir, n)
	} else {
		insts, err = r.launchHere(runCtx, testid, j, script, segDir, n)
	}
	// interrupted, or past RUN_TIMEOUT: said as such whatever the launch's own error
	if res := r.stopped(ctx, runCtx, testid, j, fmt.Sprintf(" split over %d instances", n)); res != nil {
		return res
	}
	if err != nil {
		return fail(fmt.Errorf("k6 run %s (target %s) split over %d instances: %w", j.Scenario, j.Target, n, err))
	}

	// the clocks are told from the first resumed: a launcher may resume them in any order
	first := insts[0].resumed
	for _, in := range insts {
		if in.resumed.Before(first) {
			first = in.resumed
		}
	}
	var loaded []*result.Instance
	var missing []string
	for _, in := range insts {
		got, err := r.collectSegment(in, j, merged)
		if err != nil {
			missing = append(missing, fmt.Sprintf("segment %d/%d: %v", in.index+1, n, err))
			continue
		}
		got.ClockOffsetMs = float64(in.resumed.Sub(first).Microseconds()) / 1000
		loaded = append(loaded, got)
	}
	if len(missing) > 0 {
		return fail(fmt.Errorf("k6 run %s (target %s) split over %d instances: %s", j.Scenario, j.Target, n, strings.Join(missing, "; ")))
	}
	m, err := result.Merge(loaded)
	if err != nil {
		return fail(err)
	}
	res := m.Result
	var all float64
	for _, in := range insts {
		if c, err := result.AllRequests(in.summary); err == nil {
			all += c
		}
	}
	watched.record(res, &all)
	res.Judge()
	if err := result.WriteMerged(merged, insts[0].summary, m); err != nil {
		return fail(fmt.Errorf("merged result of %s %s: %w", j.Scenario, j.Target, err))
	}
	return res
}

// launchHere runs the n instances as k6 processes of this machine, and returns once all
// have ended.
func (r *Runner) launchHere(ctx context.Context, testid string, j Job, script, segDir string, n int) ([]*segmentInstance, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out sync.Mutex // one line at a time from the instances' interleaved output
	insts := make([]*segmentInstance, n)
	ports, err := freePorts(n)
	if err != nil {
		return nil, fmt.Errorf("REST API ports for its instances: %w", err)
	}
	for i := range n {
		in, err := r.startSegment(ctx, testid, j, script, segDir, i, n, ports[i], &out)
		if err != nil {
			cancel()
			r.waitSegments(insts[:i])
			return nil, fmt.Errorf("segment %d/%d: %w", i+1, n, err)
		}
		insts[i] = in
	}
	if err := waitReady(ctx, insts); err != nil {
		cancel()
		r.waitSegments(insts)
		return nil, err
	}
	if err := resume(ctx, insts); err != nil {
		cancel()
		r.waitSegments(insts)
		return nil, err
	}
	r.waitSegments(insts)
	return insts, nil
}

// A Launcher runs the instances of a split run elsewhere than as processes of this machine:
// the k6-operator's runners (cmd/proxybench k8s-run). Each instance gets what a local one
// would: the same script, environment and flags, its own result and histograms files, and
// Launch returns once every one has ended.
type Launcher interface {
	Launch(ctx context.Context, l Launch) ([]Launched, error)
}

// Launch is one split run for a Launcher.
type Launch struct {
	TestID string
	Job    Job
	// Cell names the run's files: <cell>.json, and its instances' under segments/.
	Cell   string
	Script string
	// Env is what every instance's k6 gets, SUMMARY_JSON apart: Summaries[i] is instance i's.
	Env []string
	// Summaries and Histograms are the files instance i (0-based) must leave: its result
	// (SUMMARY_JSON) and its --out proxybench-histograms file.
	Summaries, Histograms []string
}

// Launched is how one instance ended: its k6's exit code and when it was resumed, by this
// machine's clock.
type Launched struct {
	Exit    int
	Resumed time.Time
}

// launchElsewhere runs the n instances through r.Launcher.
func (r *Runner) launchElsewhere(ctx context.Context, testid string, j Job, script, segDir string, n int) ([]*segmentInstance, error) {
	l := Launch{TestID: testid, Job: j, Cell: j.name(), Script: script}
	insts := make([]*segmentInstance, n)
	for i := range n {
		insts[i] = r.newSegment(j, segDir, i, n)
		// a file of an earlier run under this testid is never taken for this one's
		_ = os.Remove(insts[i].summary)
		_ = os.Remove(insts[i].hist)
		l.Summaries = append(l.Summaries, insts[i].summary)
		l.Histograms = append(l.Histograms, insts[i].hist)
	}
	l.Env = slices.DeleteFunc(append(r.Env(testid, j, ""), "SEGMENTS="+strconv.Itoa(n)), func(kv string) bool { return strings.HasPrefix(kv, "SUMMARY_JSON=") })
	got, err := r.Launcher.Launch(ctx, l)
	if err != nil {
		return nil, err
	}
	if len(got) != n {
		return nil, fmt.Errorf("the launcher reported %d instances of %d", len(got), n)
	}
	for i, in := range insts {
		// thresholdsFailed is a run whose result says why it is invalid (collectSegment)
		if c := got[i].Exit; c != 0 && c != thresholdsFailed {
			in.err = fmt.Errorf("k6 exited with code %d", c)
		}
		in.resumed = got[i].Resumed
		close(in.done)
	}
	return insts, nil
}

// newSegment is instance i of n: its files under segDir.
func (r *Runner) newSegment(j Job, segDir string, i, n int) *segmentInstance {
	base := fmt.Sprintf("%s.%dof%d", j.name(), i+1, n)
	return &segmentInstance{
		index:   i,
		summary: filepath.Join(segDir, base+".json"),
		hist:    filepath.Join(segDir, base+".histograms.json"),
		done:    make(chan struct{}),
	}
}

// SegmentsDir is the folder, beside a run's result files, of the instances' own results.
const SegmentsDir = "segments"

func (r *Runner) startSegment(ctx context.Context, testid string, j Job, script, segDir string, i, n, port int, out *sync.Mutex) (*segmentInstance, error) {
	in := r.newSegment(j, segDir, i, n)
	in.api = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	_ = os.Remove(in.summary)
	argv := append(append(slices.Clone(r.ClientPrefix), r.K6), r.command(nil)...)
	argv = append(argv, "--paused", "--address", in.api)
	argv = append(argv, SegmentArgs(i, n)...)
	// A --out on the command line replaces K6_OUT (k6 takes the flags' outputs over the
	// environment's): the environment's (InfluxDB, OBSERVE=1) are given as flags too.
	for _, o := range strings.Split(os.Getenv("K6_OUT"), ",") {
		if o = strings.TrimSpace(o); o != "" {
			argv = append(argv, "--out", o)
		}
	}
	argv = append(argv, "--out", "proxybench-histograms="+in.hist)
	argv = append(append(argv, r.ExtraArgs...), script)
	in.cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
	in.cmd.Env = append(r.Env(testid, j, in.summary), "SEGMENTS="+strconv.Itoa(n))
	prefix := fmt.Sprintf("[%d/%d] ", i+1, n)
	in.cmd.Stdout = &prefixWriter{w: r.Stdout, prefix: prefix, mu: out}
	in.cmd.Stderr = &prefixWriter{w: r.Stderr, prefix: prefix, mu: out}
	in.cmd.WaitDelay = 5 * time.Second
	// a controller killed outright takes its k6 instances with it, as Run's
	in.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := in.cmd.Start(); err != nil {
		return nil, err
	}
	if r.OnStart != nil {
		r.OnStart(in.cmd.Process.Pid)
	}
	go func() {
		in.err = in.cmd.Wait()
		in.cmd.Stdout.(*prefixWriter).flush()
		in.cmd.Stderr.(*prefixWriter).flush()
		close(in.done)
	}()
	return in, nil
}

func (r *Runner) waitSegments(insts []*segmentInstance) {
	for _, in := range insts {
		if in != nil {
			<-in.done
		}
	}
}

// collectSegment loads an instance's result once it has ended, with its histograms of the
// measured scenario added to its file (nothing the merge uses lives only in memory).
func (r *Runner) collectSegment(in *segmentInstance, j Job, merged string) (*result.Instance, error) {
	var exit *exec.ExitError
	runErr := in.err
	if runErr != nil && errors.As(runErr, &exit) && exit.ExitCode() == thresholdsFailed {
		runErr = nil // the run happened; its result says why it is invalid
	}
	if _, err := os.Stat(in.summary); err != nil {
		if runErr != nil {
			return nil, fmt.Errorf("k6: %w", runErr)
		}
		return nil, fmt.Errorf("wrote no result: %w", err)
	}
	add := map[string]any{}
	if h, err := readHistograms(in.hist, j.K6Scenario()); err != nil {
		fmt.Fprintf(r.Stderr, "warning: %s: %v\n", in.summary, err)
	} else {
		add["histograms"] = h
		_ = os.Remove(in.hist) // now in the result itself
	}
	if len(add) > 0 {
		if err := result.AddToFile(in.summary, add); err != nil {
			return nil, err
		}
	}
	var all *float64
	if c, err := result.AllRequests(in.summary); err == nil {
		all = &c
	}
	got, err := result.LoadInstance(in.summary)
	if err != nil {
		return nil, err
	}
	r.annotate(got.Result, j, in.summary, nil, all)
	if runErr != nil {
		got.Result.Err = fmt.Sprintf("k6 exited: %v", runErr)
	}
	if rel, err := filepath.Rel(filepath.Dir(merged), in.summary); err == nil {
		got.File = rel
	}
	return got, nil
}

// histogramsSchema is extensions/histout's Schema. That package is not imported for it: it
// would bring k6 itself into this module's build.
const histogramsSchema = 1

// readHistograms reads what extensions/histout wrote (its File), keeping the measured
// scenario's histograms.
func readHistograms(path, scenario string) (map[string]*histogram.Histogram, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("no histograms: %w", err)
	}
	var f struct {
		Schema     int                             `json:"schema"`
		Histograms map[string]*histogram.Histogram `json:"histograms"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("histograms %s: %w", path, err)
	}
	if f.Schema != histogramsSchema {
		return nil, fmt.Errorf("histograms %s: %s", path, result.SchemaMismatch("histograms", f.Schema, histogramsSchema))
	}
	suffix := "{scenario:" + scenario + "}"
	out := map[string]*histogram.Histogram{}
	for k, h := range f.Histograms {
		if strings.HasSuffix(k, suffix) {
			out[k] = h
		}
	}
	return out, nil
}

// freePorts are n distinct TCP ports of loopback nobody listens on now: all are held open
// until each is known, so no two instances are given the same one. k6 binds them a moment
// later: one taken in between makes that instance fail to start its REST API, and the run with
// it.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// k6Status is what GET /v1/status says (k6's api/v1 Status, JSON:API).
type k6Status struct {
	Data struct {
		Attributes struct {
			Status  int   `json:"status"`
			Paused  *bool `json:"paused"`
			Running bool  `json:"running"`
		} `json:"attributes"`
	} `json:"data"`
}

var apiClient = &http.Client{Timeout: 5 * time.Second}

func getStatus(ctx context.Context, api string) (*k6Status, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+api+"/v1/status", nil)
	if err != nil {
		return nil, err
	}
	return doStatus(req)
}

func doStatus(req *http.Request) (*k6Status, error) {
	res, err := apiClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %s: %s", req.Method, req.URL, res.Status, bytes.TrimSpace(body))
	}
	var st k6Status
	if err := json.Unmarshal(body, &st); err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL, err)
	}
	return &st, nil
}

// waitReady waits until every instance's REST API says it is paused before the run with its
// VUs initialized: resumed then, all start within the few milliseconds the resumes take,
// rather than each when its own initialization is done.
func waitReady(ctx context.Context, insts []*segmentInstance) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	ready := make([]bool, len(insts))
	for {
		all := true
		for i, in := range insts {
			if ready[i] {
				continue
			}
			select {
			case <-in.done:
				if in.err == nil {
					return fmt.Errorf("segment %d/%d: k6 ended before it was resumed (its output above says why)", i+1, len(insts))
				}
				return fmt.Errorf("segment %d/%d: k6 ended before it was resumed: %w (its output above says why)", i+1, len(insts), in.err)
			default:
			}
			st, err := getStatus(ctx, in.api)
			if err == nil && st.Data.Attributes.Status == statusPausedBeforeRun {
				ready[i] = true
				continue
			}
			all = false
		}
		if all {
			return nil
		}
		select {
		case <-ctx.Done():
			var late []string
			for i, ok := range ready {
				if !ok {
					late = append(late, fmt.Sprintf("%d/%d (%s)", i+1, len(insts), insts[i].api))
				}
			}
			return fmt.Errorf("segments %s not ready (GET /v1/status: paused before the run) within %v", strings.Join(late, ", "), readyTimeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// resume un-pauses every instance, one PATCH after the other (loopback: a millisecond each),
// and notes when each was resumed: its test clock starts then.
func resume(ctx context.Context, insts []*segmentInstance) error {
	body := []byte(`{"data":{"type":"status","id":"default","attributes":{"paused":false}}}`)
	for i, in := range insts {
		req, err := http.NewRequestWithContext(ctx, http.MethodPatch, "http://"+in.api+"/v1/status", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		sent := time.Now()
		st, err := doStatus(req)
		if err != nil {
			return fmt.Errorf("segment %d/%d: resume: %w", i+1, len(insts), err)
		}
		if st.Data.Attributes.Paused != nil && *st.Data.Attributes.Paused {
			return fmt.Errorf("segment %d/%d: still paused after PATCH /v1/status", i+1, len(insts))
		}
		// the midpoint of the exchange: k6 starts its clock while answering
		in.resumed = sent.Add(time.Since(sent) / 2)
	}
	return nil
}

// prefixWriter writes whole lines, each after prefix, under mu: the instances' outputs
// interleave by line, each line saying whose it is.
type prefixWriter struct {
	w      io.Writer
	prefix string
	mu     *sync.Mutex // shared by the instances: one line at a time
	bufMu  sync.Mutex  // flush may run while a Write still does (past the command's WaitDelay)
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.bufMu.Lock()
	defer p.bufMu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			break
		}
		p.emit(p.buf[:i+1])
		p.buf = p.buf[i+1:]
	}
	return len(b), nil
}

func (p *prefixWriter) emit(line []byte) {
	if p.w == nil {
		return
	}
	out := append([]byte(p.prefix), line...)
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = p.w.Write(out)
}

func (p *prefixWriter) flush() {
	p.bufMu.Lock()
	defer p.bufMu.Unlock()
	if len(p.buf) > 0 {
		p.emit(append(p.buf, '\n'))
		p.buf = nil
	}
}

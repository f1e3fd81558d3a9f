package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/stack"
	"github.com/proxybench/proxybench/verdict"
)

// TestTimingRulesOnABusyMachine proves the probes' timing rules tell a busy machine from a
// proxy that holds a stream back. A CPU burner takes one of the machine's CPUs for the whole
// test, as a build beside a user's run would: the stream and sse probes against direct (which
// cannot buffer) stay valid, their results and tables saying the machine was busy, while nginx
// holding the stream back (gzip with proxy_buffering on) stays invalid for it. More samples
// than the other tests take, so that a stall has its chances.
func TestTimingRulesOnABusyMachine(t *testing.T) {
	const held, samples = "nginx-held", 12
	h := variantHarness(t, 2750, nginxVariant{held, heldBack})
	h.up(t)
	burn(t, 5*time.Minute)

	tests := []struct {
		scenario, target string
		want             []string // prefixes of reasons the result must give; none: valid
	}{
		{scenario: "stream", target: stack.Direct},
		{scenario: "sse", target: stack.Direct},
		{scenario: "stream", target: held, want: []string{"first chunk held back in", "chunks released together in"}},
		{scenario: "sse", target: held, want: []string{"first event held back in", "events released together in"}},
	}
	for _, proto := range []string{"h1c", "h2"} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/%s/%s", tc.scenario, tc.target, proto), func(t *testing.T) {
				testid := fmt.Sprintf("e2e-busy-%s-%s-%s", tc.scenario, tc.target, proto)
				cmd := exec.Command(filepath.Join(h.root, "bin", "proxybench"),
					"k6", "-scenario", tc.scenario, "-targets", tc.target, "-proto", proto, "-testid", testid)
				cmd.Dir, cmd.Env = h.root, h.env("SAMPLES="+strconv.Itoa(samples))
				out, err := cmd.CombinedOutput()
				r, lerr := result.LoadResult(filepath.Join(h.results, testid, fmt.Sprintf("%s-%s-%s.json", tc.scenario, proto, tc.target)))
				if lerr != nil {
					t.Fatalf("%v\n%s", lerr, out)
				}
				logFigures(t, r)
				if r.OutsideLoad == nil {
					t.Fatalf("no outside_load in the result: the run was not sampled\n%s", out)
				}
				t.Logf("outside load %.0f%% of the CPU, %v stalled responses of %v", r.OutsideLoad.CPUShare*100, stalls(r), r.Requests)
				if !r.OutsideLoad.Over {
					t.Errorf("outside load %.0f%% of the CPU with a burner on one of %d: want it over %.0f%%",
						r.OutsideLoad.CPUShare*100, runtime.NumCPU(), verdict.OutsideLoadShare*100)
				}
				if len(tc.want) == 0 {
					if err != nil || !r.Valid {
						t.Fatalf("invalid on a busy machine: %q (%v)\n%s", r.Invalid, err, out)
					}
					if r.Requests != samples {
						t.Errorf("%v samples, want %d", r.Requests, samples)
					}
					return
				}
				if err == nil || r.Valid {
					t.Fatalf("valid, want invalid with %q\n%s", tc.want, out)
				}
				for _, want := range tc.want {
					if !hasReason(r.Invalid, want) {
						t.Errorf("invalid %q: no reason starting %q", r.Invalid, want)
					}
				}
			})
		}
	}
}

// burn keeps one CPU busy for at most d: a shell's empty loop, killed when d is over, when the
// test ends (by its pid) or when the test's process dies (Pdeathsig). Not under timeout(1): a
// SIGKILL to timeout would leave its loop running on.
func burn(t *testing.T, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	cmd := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("the CPU burner: %v", err)
	}
	t.Cleanup(func() {
		cancel() // kills it, if d is not over yet
		_ = cmd.Wait()
	})
	time.Sleep(time.Second) // under way before the first run
}

func stalls(r *result.Result) float64 {
	if r.Pacing == nil {
		return 0
	}
	return r.Pacing.Stalls
}

package e2e

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// sampleTimeout is every probe sample's (scenarios/lib/options.js SAMPLE_TIMEOUT_MS).
const sampleTimeout = 10 * time.Second

// quicHandshakeIdle is quic-go's HandshakeIdleTimeout, which k6/x/proxybench/http3 keeps: a QUIC
// handshake that hears nothing for that long fails (1211, a dial timeout).
const quicHandshakeIdle = 5 * time.Second

// hangSamples is SAMPLES for the hanging runs: more than one, so that the cell is seen to go on
// to its next sample after a hung one.
const hangSamples = 2

// TestProbeSamplesEndWithinTheirTimeout runs every probe over each of its protocols against
// targets that hang (startHangingTarget): one that accepts and never answers (TCP, a TLS
// handshake never finished, a QUIC handshake never finished), one whose stream and sse stall
// after their first part and whose WebSocket upgrade gets a 101 and then nothing. Each sample
// must fail within its timeout plus a second, saying why in the verdict, and the cell go on to
// the next: the run ends long before RUN_TIMEOUT, the last guard.
func TestProbeSamplesEndWithinTheirTimeout(t *testing.T) {
	h := newHarness(t)
	upstream := startUpstreamOn(t, h, "127.0.0.1")
	certs, err := stack.EnsureCerts(filepath.Join(t.TempDir(), "certs"), "bench.test")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(certs.CertFile, certs.KeyFile)
	if err != nil {
		t.Fatal(err)
	}

	type cell struct {
		scenario, proto string
		how             hang
		words           string // the verdict's words for how each sample failed
	}
	var cells []cell
	for _, p := range runner.Probes {
		for _, proto := range p.Protos {
			silent := "no answer within the sample's 10 s timeout"
			if p.Name == "ws" {
				silent = "no 101 within the sample's 10 s timeout"
			}
			cells = append(cells, cell{p.Name, proto, hangSilent, silent})
			switch p.Name {
			case "stream", "sse":
				cells = append(cells, cell{p.Name, proto, hangStall, "the body stopped before its end and had not ended within the sample's 10 s timeout"})
			case "ws":
				cells = append(cells, cell{p.Name, proto, hangStall, "upgraded, then no message within the sample's 10 s timeout"})
			}
		}
	}
	targets := map[string]hangingTarget{}
	name := func(i int) string { return fmt.Sprintf("hanging%d", i) }
	for i, c := range cells {
		targets[name(i)] = startHangingTarget(t, upstream, cert, c.how)
	}
	// RUN_TIMEOUT, the last guard: what the runner's default would be beyond these runs'
	const runTimeout = 3 * time.Minute
	base := runner.Runner{
		K6: filepath.Join(h.root, "bin", "k6"), ScenariosDir: filepath.Join(h.root, "scenarios"),
		ResultsDir: t.TempDir(), TargetsFile: hangingTargetsFile(t, targets), CAFile: certs.CAFile,
		Timeout: runTimeout,
	}
	// k6's start, setup() and the 1 s warm-up (10 s: several runs start at once on 2 CPUs),
	// then SAMPLES samples of at most the timeout and a second
	bound := 10*time.Second + hangSamples*(sampleTimeout+time.Second)

	// The runs mostly wait: several at a time, not so many that k6's start-up crowds the CPUs.
	slots := make(chan struct{}, 6)
	var wg sync.WaitGroup
	for i, c := range cells {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			t.Run(fmt.Sprintf("%s/%s/%s", c.scenario, c.proto, c.how), func(t *testing.T) {
				var out bytes.Buffer
				r := base
				r.Stdout, r.Stderr = &out, &out
				j := runner.Job{Scenario: c.scenario, Target: name(i), Proto: c.proto, Env: []string{fmt.Sprintf("SAMPLES=%d", hangSamples)}}
				const testid = "e2e-hang"
				start := time.Now()
				res := r.Run(t.Context(), testid, j)
				took := time.Since(start)
				if res.Err != "" {
					t.Fatalf("after %v: %s\n%s", took.Round(time.Millisecond), res.Err, out.String())
				}
				file, err := r.ResultPath(testid, j)
				if err != nil {
					t.Fatal(err)
				}
				// the probes keep iteration_duration{scenario:<cell>}: the longest sample, in ms
				ms, ok := k6Values(t, file)["iteration_duration{scenario:"+c.scenario+"-"+c.proto+"}"]["max"]
				if !ok {
					t.Errorf("%s keeps no iteration_duration of its measured scenario", file)
				}
				longest := time.Duration(ms * float64(time.Millisecond))
				t.Logf("run %v, longest sample %v: %v", took.Round(time.Millisecond), longest.Round(time.Millisecond), res.Invalid)
				if longest > sampleTimeout+time.Second {
					t.Errorf("the longest sample took %v, want at most its timeout and a second (%v)", longest, sampleTimeout+time.Second)
				}
				// QUIC gives up a handshake that hears nothing for 5 s (quic-go's
				// HandshakeIdleTimeout) before the sample's timeout
				least := sampleTimeout
				if c.proto == "h3" && c.how == hangSilent {
					least = quicHandshakeIdle
				}
				if longest < least-time.Second/2 {
					t.Errorf("the longest sample took %v: the target hangs, only a timeout (%v) can have ended it", longest, least)
				}
				if took > bound {
					t.Errorf("the run took %v, want at most %v (RUN_TIMEOUT %v is the last guard only)", took, bound, runTimeout)
				}
				want := fmt.Sprintf("%d samples failed: %d %s", hangSamples, hangSamples, c.words)
				if res.Valid || !containsReason(res.Invalid, want) {
					t.Errorf("valid %v, reasons %q: want invalid, saying %q\n%s", res.Valid, res.Invalid, want, out.String())
				}
				if res.Requests != hangSamples {
					t.Errorf("%v samples measured, want %d: every one ends and the next starts", res.Requests, hangSamples)
				}
			})
		})
	}
	wg.Wait()
}

func containsReason(reasons []string, want string) bool {
	for _, r := range reasons {
		if strings.Contains(r, want) {
			return true
		}
	}
	return false
}

package calibrate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/runner"
)

// A Peer is a native load generator that `make calibrate` runs beside k6, on the same
// connections and streams, to tell what our client costs per request (internal/calibrate/install-peers.sh
// installs them). Neither verifies a body as k6 does; each must see every response a 2xx and
// no error, or its run counts for nothing.
type Peer struct {
	Name  string // wrk, h2load
	Proto string // h1c, h1, h2
	Fresh bool   // one request per new connection (the fresh-* pattern)
}

// Peers are the native clients per protocol and pattern. Debian 12's h2load has no HTTP/3,
// and no other native h3 load generator installs here: h3 has none. Fresh: wrk with
// "Connection: close" reconnects after every answer, CONNECTIONS at a time as fresh-h1c and
// fresh-h1 run; h2load opens one connection per request at a fixed rate (its only way to).
var Peers = []Peer{
	{"wrk", "h1c", false},
	{"h2load", "h1c", false},
	{"wrk", "h1", false},
	{"h2load", "h1", false},
	{"h2load", "h2", false},
	{"wrk", "h1c", true},
	{"wrk", "h1", true},
	{"h2load", "h2", true},
}

// PeerLoad is what a peer run is asked for: the target's address, the Host it is known by,
// and the load.
type PeerLoad struct {
	Addr        string // 127.0.0.1
	Host        string // bench.test
	Port        int    // the target's TLS port (h1, h2) or cleartext port (h1c)
	Route       string // the reused scenarios' route: /
	Connections int
	Streams     int // h2: concurrent streams per connection
	Duration    time.Duration
	// Fresh asks for one request per connection: Requests of them (h2load; k6's REQUESTS),
	// Connections at a time (wrk and k6), or for Duration (wrk).
	Fresh    bool
	Requests int
}

// K6Env is the load as the reused scenarios read it: the same connections and streams, for the
// duration after a 1 s warm-up; or as the fresh ones do: Requests, Connections at a time, and
// on the native loop on until the duration has passed, as long as wrk runs: a k6 process's
// start-up (≈ 0.3 s of CPU here) spread over 0.4 s of cleartext requests would be most of
// what it is charged per request, and is not what a request costs.
func (l PeerLoad) K6Env() []string {
	secs := strconv.Itoa(int(l.Duration/time.Second)) + "s"
	if l.Fresh {
		return []string{"REQUESTS=" + strconv.Itoa(l.Requests), "FRESH_CONNECTIONS=" + strconv.Itoa(l.Connections), "FRESH_DURATION=" + secs}
	}
	return []string{
		"DURATION=" + secs, "WARMUP=1s",
		"CONNECTIONS=" + strconv.Itoa(l.Connections), "STREAMS=" + strconv.Itoa(l.Streams),
	}
}

// Argv is the peer's command line: one thread (as k6 runs on what the machine gives it,
// the figure compared is requests per CPU-second, not per thread).
func (p Peer) Argv(l PeerLoad) []string {
	scheme := "https"
	if p.Proto == "h1c" {
		scheme = "http"
	}
	port := strconv.Itoa(l.Port)
	secs := strconv.Itoa(int(l.Duration.Round(time.Second) / time.Second))
	conns := strconv.Itoa(l.Connections)
	if p.Name == "wrk" {
		// wrk cannot connect to another address than its URL's: the IP, and the Host header
		// the proxies route by (no SNI: wrk sends none for an IP; it verifies no certificate)
		argv := []string{"wrk", "-t1", "-c" + conns, "-d" + secs + "s", "-H", "Host: " + net.JoinHostPort(l.Host, port)}
		if p.Fresh {
			argv = append(argv, "-H", "Connection: close") // the target closes, wrk reconnects
		}
		return append(argv, scheme+"://"+net.JoinHostPort(l.Addr, port)+l.Route)
	}
	argv := []string{"h2load", "-t1", "-c" + conns, "-D", secs, "--connect-to=" + net.JoinHostPort(l.Addr, port)}
	if p.Fresh {
		// rate mode: -c connections in all, each made for one request (-n/-c), Connections of
		// them every 10 ms: 3,200/s at 32, above the TLS handshakes any target here accepts, so
		// that, as k6's fresh runs, it is bound by the target rather than by its rate
		n := strconv.Itoa(l.Requests)
		argv = []string{
			"h2load", "-t1", "-n", n, "-c", n, "-r", conns, "--rate-period", "10ms",
			"--connect-to=" + net.JoinHostPort(l.Addr, port),
		}
	}
	if p.Proto == "h2" && p.Fresh {
		argv = append(argv, "-m1")
	} else if p.Proto == "h2" {
		argv = append(argv, "-m"+strconv.Itoa(l.Streams))
	} else {
		argv = append(argv, "--h1")
	}
	return append(argv, scheme+"://"+net.JoinHostPort(l.Host, port)+l.Route)
}

var (
	wrkRequestsRE = regexp.MustCompile(`(?m)^\s*(\d+) requests in ([\d.]+)(ms|s|m)`)
	wrkErrorsRE   = regexp.MustCompile(`(?m)^\s*(Non-2xx or 3xx responses: \d+|Socket errors: .*)$`)
	h2Requests    = regexp.MustCompile(`(?m)^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout`)
	h2Finished    = regexp.MustCompile(`(?m)^finished in ([\d.]+)(ms|s),`)
	h2Status      = regexp.MustCompile(`(?m)^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx`)
)

// ParseOutput reads the requests the peer completed, and over how many seconds, from what it
// printed; an error when it saw an error or an answer that is not a 2xx.
func (p Peer) ParseOutput(out string) (requests, seconds float64, err error) {
	unit := map[string]float64{"ms": 0.001, "s": 1, "m": 60}
	if p.Name == "wrk" {
		m := wrkRequestsRE.FindStringSubmatch(out)
		if m == nil {
			return 0, 0, fmt.Errorf("wrk printed no \"N requests in T\" line")
		}
		if e := wrkErrorsRE.FindAllString(out, -1); len(e) > 0 {
			return 0, 0, fmt.Errorf("wrk: %s", strings.Join(trimAll(e), "; "))
		}
		n, _ := strconv.ParseFloat(m[1], 64)
		s, _ := strconv.ParseFloat(m[2], 64)
		return n, s * unit[m[3]], nil
	}
	m, f, st := h2Requests.FindStringSubmatch(out), h2Finished.FindStringSubmatch(out), h2Status.FindStringSubmatch(out)
	if m == nil || f == nil || st == nil {
		return 0, 0, fmt.Errorf("h2load printed no requests, finished or status codes line")
	}
	n := make([]float64, len(m))
	for i := 1; i < len(m); i++ {
		n[i], _ = strconv.ParseFloat(m[i], 64)
	}
	// status codes also count the answers that came in after the duration, not in "succeeded"
	twoxx, _ := strconv.ParseFloat(st[1], 64)
	if n[5] > 0 || n[6] > 0 || n[7] > 0 || twoxx < n[4] || n[4] == 0 {
		return 0, 0, fmt.Errorf("h2load: %s; %s", strings.TrimSpace(m[0]), strings.TrimSpace(st[0]))
	}
	s, _ := strconv.ParseFloat(f[1], 64)
	return n[4], s * unit[f[2]], nil
}

func trimAll(s []string) []string {
	out := slices.Clone(s)
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

// PeerRun is one run of a native peer, measured as a k6 run is (Resources: the client's CPU
// over its life, the target's over the run).
type PeerRun struct {
	Peer
	Target    string
	Requests  float64
	Seconds   float64
	Resources *sample.Resources
	Err       string
}

// RunPeer runs p against a target (its pid sampled as RunSampled samples k6's runs) with the
// runner's pinning.
func RunPeer(ctx context.Context, r *runner.Runner, p Peer, target string, l PeerLoad, targetPID int) *PeerRun {
	run := &PeerRun{Peer: p, Target: target}
	argv := append(slices.Clone(r.ClientPrefix), p.Argv(l)...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	sampler, err := r.StackSide().Sample(ctx, target, targetPID, r.UpstreamPID)
	if err != nil {
		run.Err = err.Error()
		return run
	}
	err = cmd.Start()
	if err == nil {
		sampler.SetClient(cmd.Process.Pid, r.ClientCPUs)
		err = cmd.Wait()
	}
	sampler.ClientDone(cmd.ProcessState)
	rs, stopErr := sampler.Stop(context.WithoutCancel(ctx))
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		run.Err = fmt.Sprintf("%s exited %d: %s", p.Name, exit.ExitCode(), lastLine(out.String()))
	case err != nil:
		run.Err = fmt.Sprintf("%s: %v", p.Name, err)
	case stopErr != nil:
		run.Err = fmt.Sprintf("%s: no resource figures: %v", p.Name, stopErr)
	default:
		run.Requests, run.Seconds, err = p.ParseOutput(out.String())
		if err != nil {
			run.Err = err.Error()
			break
		}
		rs.PerRequest(run.Requests)
		run.Resources = &rs
	}
	return run
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

package runner

import (
	"context"
	"net/http"
	"os"
	"time"

	"github.com/proxybench/proxybench/internal/sample"
)

// Side is the stack's side of a run, what the runner reads beside k6: the upstream's counters
// and what a run cost the target. Local reads them on this machine; Remote through the stack
// host's agent (STACK=…).
type Side interface {
	// ReadUpstream reads the upstream's GET /debug/conns and /debug/served.
	ReadUpstream(ctx context.Context) (UpstreamReading, error)
	// Sample starts following what a run of target costs: its process tree (pid, on the
	// stack's host), the upstream's CPU (upstreamPID) counted apart from outside load.
	Sample(ctx context.Context, target string, pid, upstreamPID int) (Sampling, error)
}

// Sampling is one run's sampler: told of the client (k6) when it starts and ends, stopped after.
type Sampling interface {
	SetClient(pid int, cpus []int)
	ClientDone(ps *os.ProcessState)
	Stop(ctx context.Context) (sample.Resources, error)
	// Window is the target's figures over a part of the run, once stopped (an idle run's hold).
	Window(ctx context.Context, from, to time.Time) (sample.Window, bool)
}

// Local is the stack on this machine: the upstream's cleartext listener at UpstreamAddr
// (host:port; empty: not read), the targets' processes in /proc.
type Local struct{ UpstreamAddr string }

// ReadUpstream reads both counters over one connection of its own, counted in the first.
func (l Local) ReadUpstream(ctx context.Context) (UpstreamReading, error) {
	tr := &http.Transport{MaxConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	return readUpstream(ctx, func(ctx context.Context, path string, v any) error {
		return getJSON(ctx, c, "http://"+l.UpstreamAddr+path, v)
	}, 0)
}

// Sample samples pid's tree here, and the machine's CPU beside it and the upstream's.
func (Local) Sample(_ context.Context, _ string, pid, upstreamPID int) (Sampling, error) {
	s, err := sample.StartSampler(pid, 0)
	if err != nil {
		return nil, err
	}
	s.CountOutside(upstreamPID)
	return localSampling{s}, nil
}

// localSampling is a sample.Sampler as a Sampling.
type localSampling struct{ *sample.Sampler }

func (l localSampling) Stop(context.Context) (sample.Resources, error) { return l.Sampler.Stop(), nil }

func (l localSampling) Window(_ context.Context, from, to time.Time) (sample.Window, bool) {
	return l.Sampler.Window(from, to)
}

// StackSide is the runner's Stack, else the local stack its UpstreamAddr names.
func (r *Runner) StackSide() Side {
	if r.Stack != nil {
		return r.Stack
	}
	return Local{UpstreamAddr: r.UpstreamAddr}
}

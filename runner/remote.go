package runner

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/proxybench/proxybench/agent"
	"github.com/proxybench/proxybench/internal/sample"
)

// Remote is the stack on another host, read through its agent (STACK=https://…): the
// upstream's counters, and a sampler there per run.
type Remote struct{ Agent *agent.Client }

// ReadUpstream reads both counters through the agent, which opens a connection of its own to
// the upstream for each: the second is counted by the next reading.
func (rm Remote) ReadUpstream(ctx context.Context) (UpstreamReading, error) {
	return readUpstream(ctx, rm.Agent.Upstream, 1)
}

// Sample starts a sampler on the stack host (the target's tree, the upstream and that host's
// outside load) and one here for the client and this host's outside load. The local one
// follows this process as its target: the controller's own CPU is the run's, not outside load.
func (rm Remote) Sample(ctx context.Context, target string, _, _ int) (Sampling, error) {
	s, err := rm.Agent.StartSample(ctx, target)
	if err != nil {
		return nil, err
	}
	local, err := sample.StartSampler(os.Getpid(), 0)
	if err != nil {
		_, _ = rm.Agent.StopSample(ctx, s.ID)
		return nil, fmt.Errorf("load host sampler: %w", err)
	}
	local.CountOutside(0)
	return &remoteSampling{agent: rm.Agent, id: s.ID, local: local}, nil
}

// remoteSampling is one run sampled on both hosts.
type remoteSampling struct {
	agent *agent.Client
	id    string
	local *sample.Sampler
}

func (s *remoteSampling) SetClient(pid int, cpus []int)  { s.local.SetClient(pid, cpus) }
func (s *remoteSampling) ClientDone(ps *os.ProcessState) { s.local.ClientDone(ps) }

// Stop stops both samplers and merges their figures (sample.Apart).
func (s *remoteSampling) Stop(ctx context.Context) (sample.Resources, error) {
	loadHost := s.local.Stop()
	got, err := s.agent.StopSample(ctx, s.id)
	if err != nil {
		return sample.Resources{}, err
	}
	return sample.Apart(*got.Resources, loadHost), nil
}

// Window is read on the stack host, over the times k6 gave: the hosts' clock skew shifts it.
func (s *remoteSampling) Window(ctx context.Context, from, to time.Time) (sample.Window, bool) {
	got, ok, err := s.agent.Window(ctx, s.id, from, to)
	if err != nil || !ok {
		return sample.Window{}, false
	}
	return *got.Window, true
}

package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/proxybench/proxybench/agent"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// RemoteStack is a stack on another host, read through its agent (STACK=https://IP:PORT): the
// load host needs the token file alone, none of the stack host's files.
type RemoteStack struct {
	Agent *agent.Client
	State *agent.StackState
	// Config is targets.json as the load host sees the stack: the stack host's address and
	// the ports its state says each target listens on; TargetsFile is it written for k6.
	Config      *stack.Config
	TargetsFile string
	CAFile      string
}

// DialStack dials the agent at stackURL with tokenFile, reads the stack's state, and writes the
// CA and the load host's targets file into dir (the load host's run/remote).
func DialStack(ctx context.Context, stackURL, tokenFile, dir string, local *stack.Config) (*RemoteStack, error) {
	c, err := agent.Dial(ctx, stackURL, tokenFile)
	if err != nil {
		return nil, err
	}
	rs := &RemoteStack{Agent: c}
	if rs.State, err = c.State(ctx); err != nil {
		return nil, err
	}
	if rs.CAFile, err = c.CAFile(dir); err != nil {
		return nil, err
	}
	rs.Config = loadHostConfig(local, rs.State, c.Host(rs.State))
	rs.TargetsFile = filepath.Join(dir, "targets.json")
	if err := writeTargetsFile(rs.TargetsFile, rs.Config); err != nil {
		return nil, err
	}
	return rs, nil
}

// writeTargetsFile writes c, a targets file for k6 alone (its address may be no loopback one,
// which stack.LoadConfig refuses), at path.
func writeTargetsFile(path string, c *stack.Config) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("targets file for k6: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("targets file for k6: %w", err)
	}
	return nil
}

// loadHostConfig is local (this clone's targets.json) aimed at the stack host: its address,
// and the ports of every target its state has (a stack host may have moved them). The stack
// host's own targets.json keeps the loopback guard (stack.LoadConfig); this file is only
// written, for k6, whose scripts take any address.
func loadHostConfig(local *stack.Config, st *agent.StackState, host string) *stack.Config {
	c := *local
	c.Address = host
	c.Targets = map[string]stack.Ports{}
	for n, p := range local.Targets {
		c.Targets[n] = p
	}
	for n, r := range st.Targets {
		c.Targets[n] = r.Ports
	}
	c.Upstream.H1C = c.Targets[stack.Direct].H1C
	if st.TLSProfile != "" && st.TLS != nil {
		c.TLSProfiles = map[string]stack.TLSProfile{st.TLSProfile: *st.TLS}
		c.TLSProfile = st.TLSProfile
	}
	return &c
}

// Runner runs k6 on this host against the stack's targets: the load host's targets file and
// the stack's CA for k6, every figure of the stack's side through the agent.
func (rs *RemoteStack) Runner(s *stack.Stack, o RunnerOptions) *runner.Runner {
	r := baseRunner(s, o)
	r.TargetsFile, r.CAFile = rs.TargetsFile, rs.CAFile
	r.Stack = runner.Remote{Agent: rs.Agent}
	r.Negotiated = rs.State.Negotiated()
	r.OfferedStreams = offeredStreams(rs.Config, r.CAFile)
	return r
}

// IsUp tells whether the stack host's state has name running: the agent answers its state
// only while the stack is up, and a pid there is the stack host's, not one to look for here.
func (rs *RemoteStack) IsUp(name string) bool {
	_, ok := rs.State.Targets[name]
	return ok
}

// RemoteTargets are the targets of a stack on another host, as the engine sees them.
type RemoteTargets struct{ Stack *RemoteStack }

// Check says what became of name during a run: gone when the stack host's state no longer has
// that process; else whether it still answers a verified GET from here.
func (t RemoteTargets) Check(name string, pid int) (what string, gone bool) {
	ctx := context.Background()
	st, err := t.Stack.Agent.State(ctx)
	if err != nil {
		return fmt.Sprintf("could not be checked: %v", err), false
	}
	r := st.Targets[name]
	if r == nil || r.PID != pid {
		return "is no longer in the stack host's state (stopped, or started again by another)", true
	}
	p, err := stack.NewProber(t.Stack.Config.Hostname, t.Stack.Config.Address, t.Stack.CAFile)
	if err != nil {
		return fmt.Sprintf("could not be checked: %v", err), false
	}
	proto := stack.H1C
	if !slices.Contains(r.Protocols, proto) && len(r.Protocols) > 0 {
		proto = r.Protocols[0]
	}
	if err := p.Probe(ctx, proto, proto.Port(r.Ports)); err != nil {
		return fmt.Sprintf("did not answer a verified GET over %s after the run: %v", proto, err), false
	}
	return "", false
}

// Restart restarts name on the stack host, through the agent, verified there.
func (t RemoteTargets) Restart(ctx context.Context, name string) (int, error) {
	r, err := t.Stack.Agent.Restart(ctx, name)
	if err != nil {
		return 0, err
	}
	t.Stack.State.Targets[name] = r
	return r.PID, nil
}

// Log is where name's log is on the stack host: the agent does not serve it.
func (t RemoteTargets) Log(name string) (path, tail string) {
	return fmt.Sprintf("run/%s/%s.log on the stack host (%s)", name, name, t.Stack.Config.Address), ""
}

package engine

import (
	"context"
	"os"
	"path/filepath"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/runner"
	"github.com/proxybench/proxybench/stack"
)

// StackTargets are the native stack's targets, as the engine sees them.
type StackTargets struct{ Stack *stack.Stack }

// Check reads pid's state in /proc.
func (s StackTargets) Check(_ string, pid int) (what string, gone bool) {
	p := stack.Process{PID: pid}
	switch {
	case !p.Alive():
		return "exited during the run", true
	case p.Stopped():
		return "was stopped (SIGSTOP or a tracer: state T) during the run", true
	}
	return "", false
}

// Restart restarts name through the stack, verified.
func (s StackTargets) Restart(ctx context.Context, name string) (int, error) {
	r, err := s.Stack.Restart(ctx, name)
	if err != nil {
		return 0, err
	}
	return r.PID, nil
}

// Log is name's log in the run directory.
func (s StackTargets) Log(name string) (path, tail string) {
	path = filepath.Join(s.Stack.RunDir, name, name+".log")
	data, _ := os.ReadFile(path)
	return path, string(data)
}

// K6 is the runner the engine runs k6 with.
type K6 struct{ *runner.Runner }

// Sampled runs j with the target's, the upstream's and the client's CPU sampled.
func (k K6) Sampled(ctx context.Context, testid string, j runner.Job, target, upstream int) (*result.Result, *sample.Resources) {
	k.UpstreamPID = upstream
	return k.RunSampled(ctx, testid, j, target)
}

package cloud

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/proxybench/proxybench/engine"
	"github.com/proxybench/proxybench/runner"
)

// Test is one MODE=cloud run: a scenario of ScenariosDir sent to Grafana's load generators.
type Test struct {
	K6           K6
	ScenariosDir string
	// Cells are what SCENARIO and PROTO name; k6 cloud runs one, over one protocol.
	Cells []engine.Cell
	// TargetURL, TestID and Profile are the script's, over K6.Environ's.
	TargetURL, TestID, Profile string
	// Extra are k6's own flags, given after the -e flags.
	Extra []string
	// Getenv is the environment CheckLogin reads.
	Getenv func(string) string
}

// RunRemote checks that test can run on Grafana's load generators as we measure it and that k6 is
// logged in, then runs `k6 cloud run` and waits for it: its output goes to test.K6's writers.
func RunRemote(ctx context.Context, test Test) error {
	if len(test.Cells) != 1 {
		return errors.New("MODE=cloud runs one k6 test: give one SCENARIO")
	}
	if err := test.K6.portable(ctx, test.ScenariosDir, test.Cells); err != nil {
		return err
	}
	// credentials last among the checks, first before anything reaches the network
	if err := CheckLogin(test.Getenv); err != nil {
		return err
	}
	c := test.Cells[0]
	set := map[string]string{"TARGET_URL": test.TargetURL, "TESTID": test.TestID, "PROFILE": test.Profile, "PROTO": strings.Join(c.Protos, "")}
	script := filepath.Join(test.ScenariosDir, c.Scenario+".js")
	cmd := test.K6.command(ctx, runArgs(test.K6.Environ, set, test.Extra, script)...)
	cmd.Stdout, cmd.Stderr = test.K6.Stdout, test.K6.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("k6 cloud run %s: %w", filepath.Base(script), err)
	}
	return nil
}

// runArgs is `k6 cloud run` with the script's variables of environ as -e flags (a cloud run
// sees no other environment), set overriding environ, and nothing about this machine.
func runArgs(environ []string, set map[string]string, extra []string, script string) []string {
	var env []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if _, over := set[k]; !over && !slices.Contains(runner.LocalEnv, k) && (k != "TARGET" || v != "all") {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if set[k] != "" {
			env = append(env, k+"="+set[k])
		}
	}
	return append(append(append([]string{"cloud", "run"}, runner.ScriptFlags(env)...), extra...), script)
}

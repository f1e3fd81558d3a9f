package engine

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// A local run after `make up STACK_LISTEN=<ip>` goes to the state's address, where the targets
// listen, not to targets.json's loopback one: k6's targets file, the upstream's reading. The
// real upstream listens on 127.0.0.2 alone (an address of this host that targets.json's
// 127.0.0.1 is not), so that only the state's listen leads there.
func TestLocalRunGoesWhereTheStateListens(t *testing.T) {
	t.Parallel()
	cfg, err := stack.LoadConfig("../targets.json")
	if err != nil {
		t.Fatal(err)
	}
	h1c := serveUpstream(t, "127.0.0.2")
	moved := stack.Ports{TLS: cfg.Targets["nginx"].TLS + 1, H1C: cfg.Targets["nginx"].H1C + 1}

	tests := []struct {
		name, listen string
		wantFile     bool // a targets file of its own, at the state's address
	}{
		{"STACK_LISTEN", "127.0.0.2", true},
		{"targets.json's address", cfg.Address, false},
		{"a state without listen", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := t.TempDir()
			st := stack.State{Started: time.Now(), Listen: tt.listen, Targets: map[string]*stack.Running{
				stack.Direct: {Process: stack.Adopt(os.Getpid()), Ports: stack.Ports{TLS: cfg.Targets[stack.Direct].TLS, H1C: h1c}},
				"nginx":      {Process: stack.Adopt(os.Getpid()), Ports: moved},
			}}
			if err := stack.WriteJSON(filepath.Join(run, "state.json"), st); err != nil {
				t.Fatal(err)
			}
			s := &stack.Stack{Paths: stack.Paths{Root: "..", TargetsFile: "../targets.json", RunDir: run}, Config: cfg}
			r, err := NewRunner(s, RunnerOptions{ResultsDir: t.TempDir(), Profile: "smoke"})
			if err != nil {
				t.Fatal(err)
			}
			// the calibration's peers go where k6 does
			if got, want := CalibrationLoad(TargetConfig(s), stack.Direct, "h1c", 1, 1, 1).Addr, map[bool]string{false: cfg.Address, true: tt.listen}[tt.wantFile]; got != want {
				t.Errorf("the calibration's peers go to %s, want %s", got, want)
			}
			if !tt.wantFile {
				if r.TargetsFile != s.TargetsFile || r.UpstreamAddr != net.JoinHostPort(cfg.Address, strconv.Itoa(cfg.Upstream.H1C)) {
					t.Errorf("targets file %s, upstream %s: want targets.json's, at %s", r.TargetsFile, r.UpstreamAddr, cfg.Address)
				}
				return
			}
			if want := filepath.Join(run, ListenTargetsFile); r.TargetsFile != want {
				t.Fatalf("k6's targets file %s, want %s", r.TargetsFile, want)
			}
			data, err := os.ReadFile(r.TargetsFile)
			if err != nil {
				t.Fatal(err)
			}
			var written stack.Config
			if err := json.Unmarshal(data, &written); err != nil {
				t.Fatal(err)
			}
			if written.Address != tt.listen || written.Targets["nginx"] != moved || written.Upstream.H1C != h1c || written.Hostname != cfg.Hostname {
				t.Errorf("k6's targets file: %s\nwant address %s, nginx at the state's ports %+v, the upstream at %d", data, tt.listen, moved, h1c)
			}
			// the upstream's counters are read where it listens: nothing answers on 127.0.0.1
			reading, err := r.StackSide().ReadUpstream(context.Background())
			if err != nil {
				t.Fatalf("ReadUpstream at %s: %v", r.UpstreamAddr, err)
			}
			if reading.Conns < 1 || reading.ServedErr != nil {
				t.Errorf("ReadUpstream at %s: %+v; want the reading's own connection counted", r.UpstreamAddr, reading)
			}
		})
	}
}

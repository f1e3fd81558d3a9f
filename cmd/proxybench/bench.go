package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/proxybench/proxybench/engine"
	"github.com/proxybench/proxybench/observe"
	"github.com/proxybench/proxybench/stack"
)

// benchCalibrateSeconds is how long each client runs in the bench's own calibration: short, as
// it runs at every bench; `make calibrate` is the long one.
const benchCalibrateSeconds = 3

// withBaseline puts direct first among names when it is not there: every matrix is calibrated
// against the client's ceiling on this machine (the "vs direct" column), so a bench never runs
// without it.
func withBaseline(names []string) []string {
	if slices.Contains(names, stack.Direct) {
		return names
	}
	fmt.Fprintf(os.Stderr, "bench: %s added to the targets: the no-proxy baseline every target is shown against\n", stack.Direct)
	return append([]string{stack.Direct}, names...)
}

func cmdBench(ctx context.Context, args []string) (err error) {
	f, err := parseBenchFlags(args)
	if err != nil {
		return err
	}
	s, names, err := stackOf(f.targets)
	if err != nil {
		return err
	}
	files, err := f.openFiles()
	if err != nil {
		return err
	}
	if f.check {
		return nil
	}
	rs, err := remoteOf(ctx, s)
	if err != nil {
		return err
	}
	var h *held
	var targets engine.Targets = engine.StackTargets{Stack: s}
	cfg := engine.TargetConfig(s)
	if rs != nil {
		if f.pin != nil {
			return errPinRemote
		}
		if names, err = remoteTargets(rs, s, f.targets); err != nil {
			return err
		}
		names = withBaseline(names)
		if h, err = holdRemote(rs, s, f.runFlags); err != nil {
			return err
		}
		targets, cfg = engine.RemoteTargets{Stack: rs}, rs.Config
	} else {
		names = withBaseline(names)
		s.Pin = f.pin
		s.KeepGoing = stack.SelectsAll(f.targets)
		if h, err = hold(ctx, s, "bench", names, f.runFlags); err != nil {
			return err
		}
	}
	b := &engine.Bench{
		TestID: f.testid, Dir: h.dir, Profile: f.profile,
		Targets: targets, Runner: engine.K6{Runner: h.r}, Served: h.sv, PIDs: map[string]int{},
		Dashboard: f.dashboard, Restart: f.restart, Stdout: os.Stdout, Stderr: os.Stderr,
	}
	if w := observe.ResourceWriterFromEnv(); w != nil {
		b.Points = w
	}
	defer func() {
		err = errors.Join(err, h.down())
		if ctx.Err() != nil && b.Complete() {
			// The report and results were written whole (neither stops halfway), and the stack
			// is down: only the exit status says a signal came, and this, the last thing said.
			err = errors.Join(err, fmt.Errorf("interrupted after its last run, while the report was written or the stack stopped: every run is in %s, and the report beside them is whole", b.Dir))
		}
	}()
	for n, t := range h.st.Targets {
		b.PIDs[n] = t.PID
	}
	m := engine.Manifest(ctx, s, h.st, h.r.K6, names, f.profile)
	if rs != nil {
		rs.Apart(m)
	}
	m["restart_between_runs"] = f.restart
	m["open_files"] = files.String()
	if slices.Contains(f.modes, "idle") {
		m["idle"] = fmt.Sprintf("%d connections held idle per target and protocol", f.idleConnections)
	}
	if slices.Contains(f.modes, "connections") {
		m["connections"] = fmt.Sprintf("the reused cells at %s connections", engine.LevelsText(f.connectionLevels))
	}
	if slices.Contains(f.modes, "capacity") {
		m["capacity"] = fmt.Sprintf("the highest rate held with p99 ≤ %g ms, over %s", f.capacityP99, strings.Join(f.capacityProtos, ", "))
	}
	b.Begin(m)
	restarts := "each target started once"
	if f.restart {
		restarts = "each target restarted before each of its runs"
	}
	fmt.Fprintf(os.Stderr, "bench %s: profile %s, %d run(s) per throughput cell, protocols %s, modes %s; pinning %s; %s\n",
		f.testid, f.profile, f.runs, strings.Join(f.protos, ","), strings.Join(f.modes, ","), m["pinning"], restarts)
	if f.calibrate > 0 {
		if err := engine.PeersInstalled(); err != nil {
			fmt.Fprintf(os.Stderr, "bench: no client calibration: %v\n", err)
		} else {
			b.Report.Calibration = engine.BenchCalibration(ctx, h.r, cfg, h.sv, h.st.Targets[stack.Direct].PID,
				f.testid, f.protos, f.client, f.load.Connections, f.load.Streams, f.calibrate)
		}
		m["calibration"] = fmt.Sprintf("%d s per client against direct", f.calibrate)
	}
	b.Run(ctx, engine.Plan{
		Targets: names, Protos: f.protos, Modes: f.modes, Runs: f.runs,
		Ceilings:       engine.ReadCeilings(s.RunDir),
		CapacityProtos: f.capacityProtos, CapacityP99: f.capacityP99, Connections: f.load.Connections,
		ConnectionLevels: f.connectionLevels, BodySizes: f.bodySizes,
	})

	if err := b.WriteReport(); err != nil {
		return err
	}
	fmt.Printf("\nreport: %s\n", filepath.Join(b.Dir, "report.html"))
	// the Grafana `make bench OBSERVE=1` started beside InfluxDB shows the same run
	if g, err := observe.LoadGrafanaState(s.RunDir); err == nil && g != nil && g.Alive() {
		fmt.Printf("grafana: %s\n", observe.DashboardURL(g.URL(), observe.ComparisonUID, f.testid, b.Report.Started, b.Report.Finished))
		if len(b.Report.Capacity) > 0 {
			fmt.Printf("grafana, the capacity curves: %s\n", observe.DashboardURL(g.URL(), observe.CurvesUID, f.testid, b.Report.Started, b.Report.Finished))
		}
	}
	err = b.Err()
	if failed := h.st.Failures(); len(failed) > 0 && b.Complete() {
		// the last line: what a user must fix before the bench covers every target
		err = errors.Join(err, fmt.Errorf("%d target(s) failed, every other target was measured: %s", len(failed), strings.Join(failed, "; ")))
	}
	return err
}

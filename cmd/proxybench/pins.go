package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// pinScripts are the install scripts of what is not a target: each answers PROXYBENCH_PINS=1
// with its rows, as the targets' own do (docker/base-images.sh: the image's Go toolchain, each arch's).
var pinScripts = []string{"observe/install-influxdb.sh", "report/install-chromium.sh", "docker/install.sh", "docker/base-images.sh", "lint/install.sh"}

// pinRow is one row of `make pins`: what is pinned, to what, what the registry serves now and
// what an install would take today.
type pinRow struct {
	what, pinned, now, take string
}

// broken tells whether an install would take nothing: the pin has rotted.
func (r pinRow) broken() bool { return strings.HasPrefix(r.take, "NOTHING") }

// cmdPins is `make pins`, the canary of every pin: each install script resolves its pins against
// its registry (PROXYBENCH_PINS=1: downloads at most what the install would verify and keep in
// the cache, builds nothing) and says what it would take. It fails when any would take nothing.
func cmdPins(ctx context.Context, _ []string) error {
	s, err := newStack()
	if err != nil {
		return err
	}
	var scripts []string
	for _, n := range s.Config.Names() {
		if n == stack.Direct {
			continue
		}
		d, err := stack.LoadDefinition(s.ProxiesDir(), n)
		if err != nil {
			return err
		}
		if d.Install != "" {
			scripts = append(scripts, filepath.Join(d.Dir, d.Install))
		}
	}
	for _, p := range pinScripts {
		scripts = append(scripts, filepath.Join(s.Root, p))
	}

	var rows []pinRow
	var errs []error
	for _, script := range scripts {
		got, err := pinsOf(ctx, s.CacheDir, script)
		rows = append(rows, got...)
		if err != nil {
			rel, _ := filepath.Rel(s.Root, script)
			errs = append(errs, fmt.Errorf("%s: %w", rel, err))
		}
	}
	rows = append(rows, k6Pin(ctx, s.Root))
	printPins(os.Stdout, rows)
	for _, r := range rows {
		if r.broken() {
			errs = append(errs, fmt.Errorf("%s: an install would take nothing: %s", r.what, r.take))
		}
	}
	return errors.Join(errs...)
}

// pinsOf runs one install script in pins mode and parses its rows ("pin\tWHAT\tPINNED\tNOW\tTAKE").
func pinsOf(ctx context.Context, cache, script string) ([]pinRow, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = filepath.Dir(script)
	cmd.Env = append(os.Environ(), "PROXYBENCH_PINS=1", "PROXYBENCH_CACHE="+cache)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	rows := parsePins(bytes.NewReader(out))
	if err != nil {
		return rows, fmt.Errorf("%w: %s", err, stack.LastLines(stderr.String(), 5))
	}
	if len(rows) == 0 {
		return nil, errors.New("printed no pin rows")
	}
	return rows, nil
}

func parsePins(r io.Reader) []pinRow {
	var rows []pinRow
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) == 5 && f[0] == "pin" {
			rows = append(rows, pinRow{what: f[1], pinned: f[2], now: f[3], take: f[4]})
		}
	}
	return rows
}

// k6Pin is the row of the k6 the extensions build on: a Go module, immutable by version, that
// the Go module proxy serves by exact version only.
func k6Pin(ctx context.Context, root string) pinRow {
	const module = "go.k6.io/k6/v2"
	row := pinRow{what: module + " (Go module, extensions/go.mod)", now: "immutable by version (go.sum)"}
	data, err := os.ReadFile(filepath.Join(root, "extensions", "go.mod"))
	if err != nil {
		row.take = "NOTHING: " + err.Error()
		return row
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == module {
			row.pinned = f[1]
		}
	}
	if row.pinned == "" {
		row.take = "NOTHING: extensions/go.mod requires no " + module
		return row
	}
	// the check the Go-built installs make (proxies/pins.sh), so that there is one
	cmd := exec.CommandContext(ctx, "bash", "-c", `. "$1" && pins_go_module "$2" "$3"`, "pins",
		filepath.Join(root, "proxies", "pins.sh"), module, row.pinned)
	out, err := cmd.Output()
	rows := parsePins(bytes.NewReader(out))
	if err != nil || len(rows) != 1 {
		row.take = fmt.Sprintf("NOTHING: proxies/pins.sh pins_go_module: %v", err)
		return row
	}
	row.take = rows[0].take
	return row
}

func printPins(w io.Writer, rows []pinRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHAT\tPINNED\tREGISTRY NOW\tAN INSTALL TODAY TAKES")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.what, r.pinned, r.now, r.take)
	}
	tw.Flush()
}

// Command testtimes is `make test`'s clock: it runs each part of the suite, keeps how long the
// part took in a file, and prints the parts as one table at the end.
//
//	testtimes run FILE NAME CMD [ARG...]   run CMD; add a row "NAME" to FILE; exit as CMD did
//	testtimes json FILE [LABEL]            read `go test -json` on stdin and print what `go test`
//	                                       would (each failed test's output, a line per package);
//	                                       add a row per package, and per top-level test that
//	                                       took LongTest or more, LABEL after its name; exit 1 if
//	                                       a test or a build failed
//	testtimes table FILE                   print FILE's rows as a table
//
// FILE holds one row per line: part, seconds, ok or FAIL, tab-separated.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// LongTest is how long a top-level test must take to get a row of its own.
const LongTest = 30 * time.Second

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "testtimes:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	switch {
	case len(args) >= 4 && args[0] == "run":
		return timed(args[1], args[2], args[3:])
	case (len(args) == 2 || len(args) == 3) && args[0] == "json":
		return fromJSON(args[1], strings.Join(args[2:], ""), LongTest, stdin, stdout)
	case len(args) == 2 && args[0] == "table":
		return table(args[1], stdout)
	}
	return errors.New("usage: testtimes run FILE NAME CMD [ARG...] | json FILE [LABEL] | table FILE")
}

// timed runs cmd with the standard streams, and records how long it took.
func timed(file, name string, cmd []string) error {
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	t0 := time.Now()
	err := c.Run()
	if rerr := record(file, row{name, time.Since(t0), err == nil}); rerr != nil {
		return rerr
	}
	return err
}

type row struct {
	part string
	took time.Duration
	ok   bool
}

func record(file string, rows ...row) error {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	for _, r := range rows {
		status := "ok"
		if !r.ok {
			status = "FAIL"
		}
		fmt.Fprintf(f, "%s\t%.1f\t%s\n", r.part, r.took.Seconds(), status)
	}
	return f.Close()
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// module is what the rows leave out of a package's import path.
const module = "github.com/proxybench/proxybench/"

// fromJSON prints what a plain `go test` prints of the events, and records the packages' times
// and those of the top-level tests that took long or more, label after each name.
func fromJSON(file, label string, long time.Duration, stdin io.Reader, stdout io.Writer) error {
	var rows []row
	failed := false
	outputs := map[string][]string{} // package + test → its output so far
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(stdout, sc.Text()) // not an event: go's own message
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output", "build-output":
			if e.Test == "" && e.Action == "output" {
				// the package's own lines: "ok …", "FAIL …", a panic, what TestMain printed
				if !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "PASS") {
					fmt.Fprint(stdout, e.Output)
				}
				continue
			}
			if !strings.HasPrefix(e.Output, "=== ") { // -v's RUN, PAUSE, CONT
				outputs[key] = append(outputs[key], e.Output)
			}
		case "pass", "fail", "skip":
			took := time.Duration(e.Elapsed * float64(time.Second))
			if e.Action == "fail" {
				failed = true
				fmt.Fprint(stdout, strings.Join(outputs[key], ""))
			}
			delete(outputs, key)
			part := "go test " + strings.TrimPrefix(e.Package, module)
			switch {
			case e.Test == "" && e.Action == "skip":
				// a package with no test files: nothing ran
			case e.Test == "":
				rows = append(rows, row{part + label, took, e.Action != "fail"})
			case !strings.Contains(e.Test, "/") && took >= long:
				rows = append(rows, row{part + " " + e.Test + label, took, e.Action != "fail"})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := record(file, rows...); err != nil {
		return err
	}
	if failed {
		return errors.New("some tests failed (above)")
	}
	return nil
}

// table prints the rows of file, longest part name first column, time as m:ss.
func table(file string, stdout io.Writer) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var rows []row
	width := len("part")
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			continue
		}
		secs, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return fmt.Errorf("%s: %q: %w", file, line, err)
		}
		rows = append(rows, row{f[0], time.Duration(secs * float64(time.Second)), f[2] == "ok"})
		width = max(width, len(f[0]))
	}
	fmt.Fprintf(stdout, "\n%-*s  %8s\n", width, "part", "took")
	for _, r := range rows {
		status := ""
		if !r.ok {
			status = "  FAIL"
		}
		fmt.Fprintf(stdout, "%-*s  %8s%s\n", width, r.part, clock(r.took), status)
	}
	return nil
}

// clock is d as m:ss (h:mm:ss from an hour).
func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

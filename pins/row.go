// Package pins is `make pins`, the canary of every pin: each install script resolves its pins
// against its registry (PROXYBENCH_PINS=1: it downloads at most what the install would verify
// and keep in the cache, and builds nothing) and says what an install would take today.
//
// Nothing here reads the environment: the caller passes in the one the scripts run in, so
// that a test gives each value as it wants it.
package pins

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Row is one row of `make pins`: what is pinned, to what, what the registry serves now and
// what an install would take today.
type Row struct {
	What, Pinned, Now, Take string
}

// Broken tells whether an install would take nothing: the pin has rotted.
func (r Row) Broken() bool { return strings.HasPrefix(r.Take, "NOTHING") }

// Parse reads the rows an install script prints in pins mode ("pin\tWHAT\tPINNED\tNOW\tTAKE",
// proxies/pins.sh's pins_row) from among whatever else it prints.
func Parse(r io.Reader) []Row {
	var rows []Row
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) == 5 && f[0] == "pin" {
			rows = append(rows, Row{What: f[1], Pinned: f[2], Now: f[3], Take: f[4]})
		}
	}
	return rows
}

// Print writes rows as `make pins`'s table.
func Print(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHAT\tPINNED\tREGISTRY NOW\tAN INSTALL TODAY TAKES")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.What, r.Pinned, r.Now, r.Take)
	}
	tw.Flush()
}

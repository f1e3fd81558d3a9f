package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/stack"
)

// TestReuseProven: a proxy that closes every client connection after one response makes each
// request of a "reused" cell a new connection, so the cell measures handshakes. It must be
// invalid with that reason, over h1c and h2 alike, while direct's reused cells stay valid; and
// every run records the connections the upstream accepted.
func TestReuseProven(t *testing.T) {
	const name = "nginx-close"
	// over h2, nginx takes keepalive_requests from the server level: one request, then GOAWAY
	h := variantHarness(t, 550, nginxVariant{name, [][2]string{{"keepalive_requests 1000000;\n    # Go's", "keepalive_requests 1;\n    # Go's"}}})
	// h1c and h2 are what this tests; over h3, nginx's close after one request can overtake the
	// response body at the client (H3_NO_ERROR), which failed the start-up check now and then
	replaceInFile(t, filepath.Join(os.Getenv("PROXYBENCH_PROXIES"), name, "target.json"),
		`"protocols": ["h1", "h1c", "h2", "h3"]`, `"protocols": ["h1", "h1c", "h2"]`)
	h.up(t)
	for _, sc := range []string{"reused-h1c", "reused-h2"} {
		testid := "e2e-reuse-" + sc
		out, err := h.proxybench(t, "k6", "-scenario", sc, "-targets", stack.Direct+","+name, "-testid", testid)
		if err == nil {
			t.Errorf("%s: k6 exited 0 with a target that closes every connection\n%s", sc, out)
		}
		d, err := result.LoadResult(filepath.Join(h.results, testid, sc+"-"+stack.Direct+".json"))
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, sc, d)
		if d.UpstreamConns == nil || d.UpstreamConns.Requests == 0 {
			t.Errorf("%s direct: no upstream connection count: %+v", sc, d.UpstreamConns)
		} else if d.UpstreamConns.Opened > 10 {
			// direct's upstream connections are the client's: one per VU (4) and setup's
			t.Errorf("%s direct: the upstream accepted %v connections, want about 5", sc, d.UpstreamConns.Opened)
		}
		r, err := result.LoadResult(filepath.Join(h.results, testid, sc+"-"+name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Valid || !strings.Contains(strings.Join(r.Invalid, "; "), "did not keep connections alive") {
			t.Errorf("%s on a target that closes every connection: valid %v, invalid %q; want invalid: did not keep connections alive",
				sc, r.Valid, r.Invalid)
		}
		if r.UpstreamConns == nil {
			t.Errorf("%s %s: no upstream connection count", sc, name)
		}
	}
}

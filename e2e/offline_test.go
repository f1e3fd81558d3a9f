package e2e

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// bin/k6 run by hand, without the variables make sets, tries nothing outside: every HTTP(S)
// attempt of Go's client goes through HTTPS_PROXY, here a recorder on loopback. Turned on
// explicitly, the usage report is what the recorder sees, so the recorder can tell.
func TestK6StaysOfflineByDefault(t *testing.T) {
	h := newHarness(t)
	assertOffline(t, filepath.Join(h.root, "bin", "k6"))
}

// assertOffline runs k6 without the K6_ variables and fails on any attempt to reach out.
func assertOffline(t *testing.T, k6 string) {
	t.Helper()
	rec := startRecorder(t)
	dir := t.TempDir()
	noop := filepath.Join(dir, "noop.js")
	unknown := filepath.Join(dir, "unknown-extension.js")
	for f, body := range map[string]string{
		noop:    "export default function () {}\n",
		unknown: "import x from 'k6/x/proxybench-no-such-extension';\nexport default function () { x(); }\n",
	} {
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		script string
		env    []string
		want   string // what the recorder must see; "" for nothing
	}{
		{"no variables set", noop, nil, ""},
		{"unknown extension imported", unknown, nil, ""},
		{"usage report turned on", noop, []string{"K6_NO_USAGE_REPORT=false"}, "CONNECT stats.grafana.org:443"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec.reset()
			var env []string
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "K6_") && !strings.HasSuffix(strings.SplitN(kv, "=", 2)[0], "_PROXY") {
					env = append(env, kv)
				}
			}
			env = append(env, "HTTPS_PROXY=http://"+rec.addr, "HTTP_PROXY=http://"+rec.addr, "NO_PROXY=")
			cmd := exec.Command(k6, "run", "-q", "--iterations", "1", tc.script)
			cmd.Dir, cmd.Env = dir, append(env, tc.env...)
			out, _ := cmd.CombinedOutput()
			time.Sleep(500 * time.Millisecond) // a report sent at exit reaches the recorder
			got := rec.lines()
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("%s tried to reach %v\n%s", k6, got, out)
			case tc.want != "" && !strings.Contains(strings.Join(got, "\n"), tc.want):
				t.Errorf("recorder saw %v, want %q: it would not see an attempt\n%s", got, tc.want, out)
			}
		})
	}
}

// recorder is a proxy on loopback that records the first line of every request and answers none.
type recorder struct {
	addr string
	mu   sync.Mutex
	seen []string
}

func startRecorder(t *testing.T) *recorder {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	r := &recorder{addr: l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if line, err := bufio.NewReader(c).ReadString('\n'); err == nil {
					r.mu.Lock()
					r.seen = append(r.seen, strings.TrimSpace(line))
					r.mu.Unlock()
				}
			}()
		}
	}()
	return r
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = nil
}

func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// logLine is podcurl's line on stderr.
type logLine struct {
	Request string `json:"podcurl"`
	Status  int    `json:"status"`
	UnixNS  int64  `json:"unix_ns"`
	Error   string `json:"error"`
}

func logLines(t *testing.T, stderr string) []logLine {
	t.Helper()
	var lines []logLine
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(l, `{"podcurl"`) {
			var line logLine
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			lines = append(lines, line)
		}
	}
	return lines
}

// The operator's v1.6.0 command against a runner's status API.
func TestRunOperatorStart(t *testing.T) {
	t.Parallel()
	type request struct{ method, path, contentType, body string }
	var got []request
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, request{r.Method, r.URL.Path, r.Header.Get("Content-Type"), string(body)})
		mu.Unlock()
		// a failed write shows in the body podcurl printed, which the test checks
		_, _ = w.Write([]byte(`{"data":{"attributes":{"paused":false}}}`))
	}))
	defer srv.Close()
	args := shellSplit(t, strings.Replace(v160Start, "http://10.96.0.11:6565", srv.URL, 1))[0]

	before := time.Now()
	var stdout, stderr bytes.Buffer
	code := curl{sleep: func(d time.Duration) { t.Errorf("slept %v: no retry was due", d) }}.run(args, &stdout, &stderr)
	after := time.Now()
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	if want := []request{{"PATCH", "/v1/status", "application/json", startPayload}}; !reflect.DeepEqual(got, want) {
		t.Errorf("the server got %+v, want %+v", got, want)
	}
	body, writeOut, ok := strings.Cut(stdout.String(), "\n")
	if !ok || body != `{"data":{"attributes":{"paused":false}}}` {
		t.Errorf("stdout = %q, want the body, a newline, the -w text", stdout.String())
	}
	var w struct {
		HTTPCode          int     `json:"http_code"`
		TimeTotal         float64 `json:"time_total"`
		TimeStartTransfer float64 `json:"time_starttransfer"`
		URL               string
	}
	if err := json.Unmarshal([]byte(writeOut), &w); err != nil {
		t.Fatalf("-w text %q: %v", writeOut, err)
	}
	if w.HTTPCode != 200 || w.URL != srv.URL+"/v1/status" || w.TimeTotal <= 0 || w.TimeStartTransfer <= 0 ||
		!strings.Contains(writeOut, `"remote_ip":"127.0.0.1","errormsg":""`) {
		t.Errorf("-w text = %s", writeOut)
	}
	lines := logLines(t, stderr.String())
	if len(lines) != 1 || lines[0].Request != "PATCH "+srv.URL+"/v1/status" || lines[0].Status != 200 ||
		lines[0].UnixNS < before.UnixNano() || lines[0].UnixNS > after.UnixNano() {
		t.Errorf("stderr = %s, want one line of the response, between %d and %d", stderr.String(), before.UnixNano(), after.UnixNano())
	}
}

func TestRunRetries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		statuses  []int
		retryHdr  string
		wantSleep []time.Duration
		wantCode  string // the last -w http_code
	}{
		{"503 then ok", []int{503, 503, 200}, "", []time.Duration{time.Second, 2 * time.Second}, "200"},
		{"retries used up", []int{500, 502, 504, 408, 200}, "", []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, "408"},
		{"retry-after", []int{429, 200}, "5", []time.Duration{5 * time.Second}, "200"},
		{"404 is no transient error", []int{404, 200}, "", nil, "404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			n := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				mu.Lock()
				status := tc.statuses[n]
				n++
				mu.Unlock()
				if tc.retryHdr != "" {
					w.Header().Set("Retry-After", tc.retryHdr)
				}
				w.WriteHeader(status)
				_, _ = w.Write([]byte("b")) // a failed write shows in podcurl's stdout, checked below
			}))
			defer srv.Close()
			var slept []time.Duration
			var stdout, stderr bytes.Buffer
			code := curl{sleep: func(d time.Duration) { slept = append(slept, d) }}.run(
				[]string{"--retry", "3", "-X", "PATCH", srv.URL, "-w", "%{http_code}"}, &stdout, &stderr)
			attempts := len(tc.wantSleep) + 1
			if code != 0 || !reflect.DeepEqual(slept, tc.wantSleep) || stdout.String() != strings.Repeat("b", attempts)+tc.wantCode {
				t.Errorf("exit %d, slept %v, stdout %q; want 0, %v, %d bodies and %s", code, slept, stdout.String(), tc.wantSleep, attempts, tc.wantCode)
			}
			if lines := logLines(t, stderr.String()); len(lines) != attempts {
				t.Errorf("stderr has %d lines of podcurl, want %d:\n%s", len(lines), attempts, stderr.String())
			}
		})
	}
}

// A refused connection is no transient error for --retry: curl exits 7 at once.
func TestRunConnectionRefused(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var stdout, stderr bytes.Buffer
	code := curl{sleep: func(d time.Duration) { t.Errorf("slept %v: no retry was due", d) }}.run(
		[]string{"--retry", "3", "http://" + addr + "/v1/status", "-w", `%{http_code} %{errormsg}`}, &stdout, &stderr)
	if code != exitConnect {
		t.Errorf("exit %d, want %d", code, exitConnect)
	}
	if out := stdout.String(); !strings.HasPrefix(out, "000 Failed to connect to 127.0.0.1 port ") || !strings.HasSuffix(out, "connection refused") {
		t.Errorf("stdout = %q", out)
	}
	if !strings.Contains(stderr.String(), "curl: (7) Failed to connect") {
		t.Errorf("stderr = %q, want curl's message without -s", stderr.String())
	}
	if lines := logLines(t, stderr.String()); len(lines) != 1 || lines[0].Status != 0 || lines[0].Error == "" {
		t.Errorf("podcurl's lines = %+v, want one of status 0 with the error", lines)
	}
}

func TestRunRefusesUnknownOption(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := (curl{}).run([]string{"-k", "http://127.0.0.1:1/"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "-k") {
		t.Errorf("exit %d, stderr %q; want %d naming -k", code, stderr.String(), exitUsage)
	}
}

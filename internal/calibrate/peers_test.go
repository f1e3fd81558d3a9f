package calibrate

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPeerArgv(t *testing.T) {
	l := PeerLoad{Addr: "127.0.0.1", Host: "bench.test", Port: 8443, Route: "/", Connections: 32, Streams: 16, Duration: 10 * time.Second, Requests: 3000}
	for _, tc := range []struct {
		peer Peer
		port int
		want string
	}{
		{Peer{"wrk", "h1c", false}, 8081, "wrk -t1 -c32 -d10s -H Host: bench.test:8081 http://127.0.0.1:8081/"},
		{Peer{"wrk", "h1", false}, 8443, "wrk -t1 -c32 -d10s -H Host: bench.test:8443 https://127.0.0.1:8443/"},
		{Peer{"h2load", "h1c", false}, 8081, "h2load -t1 -c32 -D 10 --connect-to=127.0.0.1:8081 --h1 http://bench.test:8081/"},
		{Peer{"h2load", "h1", false}, 8443, "h2load -t1 -c32 -D 10 --connect-to=127.0.0.1:8443 --h1 https://bench.test:8443/"},
		{Peer{"h2load", "h2", false}, 8443, "h2load -t1 -c32 -D 10 --connect-to=127.0.0.1:8443 -m16 https://bench.test:8443/"},
		// fresh: wrk has the target close after each answer; h2load makes one connection per request
		{Peer{"wrk", "h1", true}, 8443, "wrk -t1 -c32 -d10s -H Host: bench.test:8443 -H Connection: close https://127.0.0.1:8443/"},
		{Peer{"h2load", "h2", true}, 8443, "h2load -t1 -n 3000 -c 3000 -r 32 --rate-period 10ms --connect-to=127.0.0.1:8443 -m1 https://bench.test:8443/"},
	} {
		l.Port = tc.port
		if got := strings.Join(tc.peer.Argv(l), " "); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.peer.Name, tc.peer.Proto, got, tc.want)
		}
	}
}

func TestPeerParseOutput(t *testing.T) {
	wrk := `Running 10s test @ http://127.0.0.1:8081/
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   827.12us  210.40us   9.01ms   91.20%
    Req/Sec    38.81k     1.02k   40.23k    81.00%
  386478 requests in 10.00s, 1.53GB read
Requests/sec:  38647.80
Transfer/sec:    156.74MB
`
	h2load := `starting benchmark...
finished in 10.00s, 37905.80 req/s, 152.35MB/s
requests: 379058 total, 379090 started, 379058 done, 379058 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 379059 2xx, 0 3xx, 0 4xx, 0 5xx
`
	for _, tc := range []struct {
		name          string
		peer          string
		out           string
		requests, sec float64
		err           string
	}{
		{"wrk", "wrk", wrk, 386478, 10, ""},
		{"wrk in ms", "wrk", strings.Replace(wrk, "in 10.00s", "in 950.00ms", 1), 386478, 0.95, ""},
		{"wrk non-2xx", "wrk", strings.Replace(wrk, "Requests/sec", "  Non-2xx or 3xx responses: 12\nRequests/sec", 1), 0, 0, "Non-2xx or 3xx responses: 12"},
		{"wrk socket errors", "wrk", strings.Replace(wrk, "Requests/sec", "  Socket errors: connect 0, read 3, write 0, timeout 0\nRequests/sec", 1), 0, 0, "Socket errors: connect 0, read 3"},
		{"wrk said nothing", "wrk", "unable to connect to 127.0.0.1:8081 Connection refused\n", 0, 0, "no \"N requests in T\" line"},
		{"h2load", "h2load", h2load, 379058, 10, ""},
		{"h2load failed", "h2load", strings.Replace(h2load, "0 failed", "5 failed", 1), 0, 0, "5 failed"},
		{"h2load 5xx", "h2load", strings.Replace(h2load, "379059 2xx, 0 3xx, 0 4xx, 0 5xx", "379000 2xx, 0 3xx, 0 4xx, 59 5xx", 1), 0, 0, "59 5xx"},
		{"h2load nothing done", "h2load", strings.ReplaceAll(h2load, "379058", "0"), 0, 0, "0 succeeded"},
		{"h2load said nothing", "h2load", "TLS handshake failed\n", 0, 0, "printed no requests"},
	} {
		n, s, err := Peer{Name: tc.peer}.ParseOutput(tc.out)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || n != tc.requests || math.Abs(s-tc.sec) > 1e-9 {
			t.Errorf("%s: %v requests in %v s, %v; want %v in %v", tc.name, n, s, err, tc.requests, tc.sec)
		}
	}
}

// Every protocol with a peer has two where two exist (wrk and h2load for reused HTTP/1.1), one
// per fresh pattern, and h3 has none: calibrate says so rather than compare k6 with nothing.
func TestPeersCoverTheProtocols(t *testing.T) {
	by := map[string][]string{}
	for _, p := range Peers {
		key := p.Proto
		if p.Fresh {
			key = "fresh " + key
		}
		by[key] = append(by[key], p.Name)
	}
	for proto, want := range map[string][]string{
		"h1c": {"wrk", "h2load"}, "h1": {"wrk", "h2load"}, "h2": {"h2load"},
		"fresh h1c": {"wrk"}, "fresh h1": {"wrk"}, "fresh h2": {"h2load"},
	} {
		if !slices.Equal(by[proto], want) {
			t.Errorf("%s: peers %v, want %v", proto, by[proto], want)
		}
	}
	if len(by["h3"]) > 0 {
		t.Errorf("h3: peers %v, but none installs here", by["h3"])
	}
}

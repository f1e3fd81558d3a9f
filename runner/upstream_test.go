package runner

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// countingUpstream answers /debug/conns with the connections it accepted (its readers' own
// included, as the upstream does) and, when served is set, /debug/served with the requests
// answered on "/" per listener, as the test sets them.
type countingUpstream struct {
	conns          atomic.Int64
	h1c, tls, json atomic.Int64
	served         bool
}

func (u *countingUpstream) start(t *testing.T) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/debug/conns":
			fmt.Fprintf(w, `{"h1c":%d,"tls":0,"h3":0}`, u.conns.Load())
		case r.URL.Path == "/debug/served" && u.served:
			fmt.Fprintf(w, `{"h1c":{"/":{"requests":%d,"bytes":0},"/json":{"requests":%d,"bytes":0}},"tls":{"/":{"requests":%d,"bytes":0}},"h3":{}}`,
				u.h1c.Load(), u.json.Load(), u.tls.Load())
		default:
			http.NotFound(w, r)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			u.conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func TestWatchUpstream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		served   bool
		answered *float64 // nil: not read
	}{
		{name: "the requests answered on the run's route, every listener", served: true, answered: new(float64(130))},
		{name: "an upstream without /debug/served: connections only", served: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := &countingUpstream{served: tc.served}
			u.h1c.Store(1000)
			addr := u.start(t)
			r := &Runner{UpstreamAddr: addr, Stderr: io.Discard}
			done := r.watchUpstream(context.Background())
			if done == nil {
				t.Fatal("no watch of a reachable upstream")
			}
			// the run: 3 connections, 100 answers over h1c and 30 over TLS on /, 7 on /json
			for range 3 {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				_ = c.Close()
			}
			u.h1c.Add(100)
			u.tls.Add(30)
			u.json.Add(7)
			seen := done(200, "/")
			if seen.conns == nil || seen.conns.Opened != 3 || seen.conns.Per1k != 15 {
				t.Errorf("connections %+v, want 3 opened, 15 per 1k requests", seen.conns)
			}
			switch {
			case tc.answered == nil && seen.answered != nil:
				t.Errorf("answered %v, want none read", *seen.answered)
			case tc.answered != nil && (seen.answered == nil || *seen.answered != *tc.answered):
				t.Errorf("answered %v, want %v", seen.answered, *tc.answered)
			}
		})
	}
}

func TestWatchUpstreamUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	r := &Runner{UpstreamAddr: addr, Stderr: io.Discard}
	if done := r.watchUpstream(context.Background()); done != nil {
		t.Error("a watch of an upstream that does not answer, want none")
	}
}

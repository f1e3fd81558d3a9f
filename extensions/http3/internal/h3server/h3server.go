// Package h3server is a small HTTP/3 (quic-go) server for the tests, the
// benchmark and the example of k6/x/proxybench/http3: a throwaway CA and leaf
// certificate, the proxybench upstream's routes (package upstream: the same
// handlers, bodies and answers) with a few of the tests' own, and counters of
// the QUIC connections it accepted and how they were closed.
package h3server

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/proxybench/proxybench/extensions/localca"
	"github.com/proxybench/proxybench/extensions/upstream"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// CA is a throwaway certificate authority and a leaf it signed.
type CA struct {
	Pool *x509.CertPool  // trusts the CA
	PEM  []byte          // the CA certificate, PEM-encoded (for SSL_CERT_FILE)
	Leaf tls.Certificate // for the hosts given to NewCA
}

// NewCA makes a CA and a leaf certificate valid for hosts (names or IPs), for a day.
func NewCA(hosts ...string) (*CA, error) {
	a, err := localca.New("h3server test CA", hosts, 24*time.Hour, 24*time.Hour)
	if err != nil {
		return nil, err
	}
	caPEM, _, _, err := a.PEM()
	if err != nil {
		return nil, err
	}
	return &CA{Pool: a.Pool(), PEM: caPEM, Leaf: a.Leaf()}, nil
}

// Server is a running HTTP/3 server with connection counters.
type Server struct {
	Addr *net.UDPAddr // where it listens

	srv  *http3.Server
	conn *net.UDPConn

	accepted    atomic.Int64 // QUIC connections accepted
	closedClean atomic.Int64 // closed by the peer with H3_NO_ERROR or NO_ERROR
	closedOther atomic.Int64 // closed any other way (idle timeout, error)

	mu      sync.Mutex
	authors map[string]int // :authority seen, and how often
}

// Start serves the routes on addr (e.g. "127.0.0.1:0") with the CA's leaf.
func Start(addr string, ca *CA) (*Server, error) {
	udpAddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	conn, err := net.ListenUDP("udp", udpAddr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		Addr:    conn.LocalAddr().(*net.UDPAddr), //nolint:forcetypeassert // a UDP socket
		conn:    conn,
		authors: map[string]int{},
	}
	s.srv = &http3.Server{
		TLSConfig: http3.ConfigureTLSConfig(&tls.Config{
			Certificates: []tls.Certificate{ca.Leaf},
			MinVersion:   tls.VersionTLS13,
		}),
		QUICConfig:  &quic.Config{MaxIncomingStreams: 1000},
		Handler:     s.routes(),
		ConnContext: s.connContext,
	}
	go func() { _ = s.srv.Serve(conn) }()
	return s, nil
}

func (s *Server) connContext(ctx context.Context, c *quic.Conn) context.Context {
	s.accepted.Add(1)
	go func() {
		<-c.Context().Done()
		if closedCleanly(context.Cause(c.Context())) {
			s.closedClean.Add(1)
		} else {
			s.closedOther.Add(1)
		}
	}()
	return ctx
}

// closedCleanly tells whether the peer closed the connection without error.
func closedCleanly(cause error) bool {
	var appErr *quic.ApplicationError
	if errors.As(cause, &appErr) {
		return appErr.Remote && (appErr.ErrorCode == 0 || appErr.ErrorCode == quic.ApplicationErrorCode(http3.ErrCodeNoError))
	}
	var trErr *quic.TransportError
	if errors.As(cause, &trErr) {
		return trErr.Remote && trErr.ErrorCode == quic.NoError
	}
	return false
}

// Accepted is the number of QUIC connections accepted so far.
func (s *Server) Accepted() int64 { return s.accepted.Load() }

// ClosedCleanly is the number of connections the client closed without error.
func (s *Server) ClosedCleanly() int64 { return s.closedClean.Load() }

// ClosedOtherwise is the number of connections that ended another way.
func (s *Server) ClosedOtherwise() int64 { return s.closedOther.Load() }

// Authorities returns how often each :authority was requested.
func (s *Server) Authorities() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.authors))
	for k, v := range s.authors {
		out[k] = v
	}
	return out
}

// Close stops the server at once.
func (s *Server) Close() error {
	err := s.srv.Close()
	_ = s.conn.Close()
	return err
}

// routes are the upstream's, and the tests' own: a client's view of a request (/echo), any
// status (/status/N), a slow answer (/slow), bytes that are not text (/binary) and the / body
// as a proxy that rewrites a byte would send it (/rewritten).
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", upstream.NewHandler(upstream.DefaultUploadLimit))
	mux.HandleFunc("/rewritten", func(w http.ResponseWriter, r *http.Request) {
		// "/" as a proxy that rewrites bytes would send it: the byte at ?at= changed, same length
		at, err := strconv.Atoi(r.URL.Query().Get("at"))
		if err != nil || at < 0 || at >= upstream.RootBodySize {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		body := upstream.Pattern(upstream.RootBodySize)
		body[at] ^= 0x20
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		// what the request looked like on the server side
		w.Header().Set("X-Authority", r.Host)
		w.Header().Set("X-Method", r.Method)
		w.Header().Set("X-User-Agent", r.UserAgent())
		w.Header().Set("X-Custom", r.Header.Get("X-Custom"))
		_, _ = bytes.NewBuffer(nil).ReadFrom(r.Body)
		_, _ = w.Write([]byte(r.Proto))
	})
	mux.HandleFunc("/status/", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(r.URL.Path[len("/status/"):])
		if err != nil || code < 200 || code > 599 {
			code = http.StatusBadRequest
		}
		w.WriteHeader(code)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		d, err := time.ParseDuration(r.URL.Query().Get("d"))
		if err != nil || d > 10*time.Second {
			d = time.Second
		}
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write([]byte("slow"))
	})
	// the head and a first part, then nothing until the client goes: a body that stalls
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("first"))
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/binary", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte{0, 1, 2, 0xfe, 0xff})
	})
	return s.countAuthority(mux)
}

func (s *Server) countAuthority(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.authors[r.Host]++
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// Package agent serves, over HTTPS on the stack host, what the runner reads locally when client
// and stack share a machine: the stack's state, the upstream's counters, CPU and RSS samples of
// a target over a run window, a target's restart and the CA certificate. Every request carries
// the bearer token of the token file; the agent runs no command but a restart of a target
// targets.json defines.
package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// MaxBody caps a request's body: the largest is a sampler's {"target":…}.
const MaxBody = 64 << 10

// Agent answers the load host's requests about one stack.
type Agent struct {
	stack   *stack.Stack
	token   string
	caPEM   []byte
	samples *samplers
}

// New is the agent of s, answering requests that carry token, serving caPEM as the CA.
func New(s *stack.Stack, token string, caPEM []byte) *Agent {
	return &Agent{stack: s, token: token, caPEM: caPEM, samples: newSamplers(MaxSamplers, MaxSampling, KeepStopped)}
}

// Close stops every sampler still running.
func (a *Agent) Close() { a.samples.closeAll() }

// Handler is the agent's API, behind the token but for the CA.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/state", a.serveState)
	mux.HandleFunc("GET "+caPath, a.serveCA)
	mux.HandleFunc("GET /v1/upstream/served", a.serveUpstream("/debug/served"))
	mux.HandleFunc("GET /v1/upstream/conns", a.serveUpstream("/debug/conns"))
	mux.HandleFunc("POST /v1/samples", a.startSample)
	mux.HandleFunc("GET /v1/samples/{id}", a.readSample)
	mux.HandleFunc("DELETE /v1/samples/{id}", a.stopSample)
	mux.HandleFunc("POST /v1/targets/{name}/restart", a.serveRestart)
	return a.authorized(mux)
}

// caPath is the one request answered without the token: the CA is public, and a load host
// must pin it (by the token file's ca_sha256) before it sends the token to anyone.
const caPath = "/v1/ca"

// authorized answers 401 to a request without the token but GET caPath, before anything else
// is read; its body is capped for every handler.
func (a *Agent) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		public := r.Method == http.MethodGet && r.URL.Path == caPath
		if !public && !tokenMatches(r.Header.Get("Authorization"), a.token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="proxybench agent"`)
			fail(w, http.StatusUnauthorized, errors.New("no valid bearer token: send Authorization: Bearer <the token file's token>"))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		next.ServeHTTP(w, r)
	})
}

// serveState is run/state.json as the stack wrote it, read afresh: 503 when no stack is up.
func (a *Agent) serveState(w http.ResponseWriter, _ *http.Request) {
	data, err := os.ReadFile(filepath.Join(a.stack.RunDir, "state.json"))
	if errors.Is(err, os.ErrNotExist) {
		fail(w, http.StatusServiceUnavailable, errors.New("no stack is up on this host: run `make up`"))
		return
	}
	if err != nil {
		fail(w, http.StatusInternalServerError, fmt.Errorf("read stack state: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

func (a *Agent) serveCA(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/x-pem-file")
	_, _ = w.Write(a.caPEM)
}

// upState is the stack's state when a stack is up, else the status and why.
func (a *Agent) upState() (*stack.State, int, error) {
	st, err := a.stack.LoadState()
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	if !st.IsUp(stack.Direct) {
		return nil, http.StatusServiceUnavailable, errors.New("no stack is up on this host (the upstream, direct, is not): run `make up`")
	}
	return st, 0, nil
}

// knownTarget is nil when targets.json defines name, else the 400 naming those it defines.
func (a *Agent) knownTarget(name string) error {
	names := a.stack.Config.Names()
	if slices.Contains(names, name) {
		return nil
	}
	return fmt.Errorf("target %q: not one of targets.json's: %s", name, strings.Join(names, ", "))
}

func (a *Agent) serveRestart(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := a.knownTarget(name); err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	got, err := a.restartTarget(r, name)
	if err != nil {
		fail(w, http.StatusConflict, err)
		return
	}
	reply(w, http.StatusOK, got)
}

// restartTarget is stack.Stack.Restart, under the run directory's lock as `make up` takes it:
// never while another controller command changes the stack.
func (a *Agent) restartTarget(r *http.Request, name string) (*stack.Running, error) {
	unlock, err := a.stack.Lock("agent restart " + name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return a.stack.Restart(r.Context(), name)
}

// problem is every error's body: {"error": why}.
type problem struct {
	Error string `json:"error"`
}

func fail(w http.ResponseWriter, status int, err error) {
	reply(w, status, problem{Error: err.Error()})
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decodeBody reads r's JSON body into v, strictly: unknown fields and trailing data are errors,
// and a body over MaxBody is 413.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		fail(w, http.StatusRequestEntityTooLarge, fmt.Errorf("request body over %d bytes", tooBig.Limit))
		return false
	case err != nil:
		fail(w, http.StatusBadRequest, fmt.Errorf("request body: %w", err))
		return false
	}
	return true
}

// upstreamTimeout bounds one read of the upstream's counters.
const upstreamTimeout = 5 * time.Second

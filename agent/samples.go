package agent

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/proxybench/proxybench/internal/sample"
	"github.com/proxybench/proxybench/stack"
)

// The bounds of sampling: how many samplers run at once, how long one may run before it stops
// itself (a load host that never came back), and how long and how many stopped ones' figures
// are kept for a GET of their window.
const (
	MaxSamplers = 4
	MaxSampling = time.Hour
	KeepStopped = 10 * time.Minute
	MaxStopped  = 32
)

// Sample is a sampler's answer: its target and pid, and once stopped the figures
// sample.Sampler.Stop returns (Resources) and, when from and to were asked, Window's.
type Sample struct {
	ID        string            `json:"id"`
	Target    string            `json:"target"`
	PID       int               `json:"pid"`
	Running   bool              `json:"running"`
	Resources *sample.Resources `json:"resources,omitempty"`
	Window    *sample.Window    `json:"window,omitempty"`
	WindowErr string            `json:"window_error,omitempty"`
}

// held is one sampler and what it follows.
type held struct {
	target  string
	pid     int
	sampler *sample.Sampler
	timer   *time.Timer // stops it at MaxSampling
	once    sync.Once   // stops it
	stopped *sample.Resources
	until   time.Time // when stopped: forgotten after
}

// samplers are the agent's samplers by id.
type samplers struct {
	max          int
	maxRun, keep time.Duration
	mu           sync.Mutex
	byID         map[string]*held
}

func newSamplers(most int, maxRun, keep time.Duration) *samplers {
	return &samplers{max: most, maxRun: maxRun, keep: keep, byID: map[string]*held{}}
}

// start samples the tree of pid (target's) and counts what the machine used beside it and the
// upstream's upstreamPID, as the runner's local sampler does.
func (ss *samplers) start(target string, pid, upstreamPID int) (string, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.forgetExpired(time.Now())
	running := 0
	for _, h := range ss.byID {
		if h.stopped == nil {
			running++
		}
	}
	if running >= ss.max {
		return "", fmt.Errorf("%d samplers run already: DELETE one first: %w", ss.max, errTooMany)
	}
	s, err := sample.StartSampler(pid, 0)
	if err != nil {
		return "", err
	}
	s.CountOutside(upstreamPID)
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	h := &held{target: target, pid: pid, sampler: s}
	h.timer = time.AfterFunc(ss.maxRun, func() { ss.stop(id) })
	ss.byID[id] = h
	return id, nil
}

var (
	errTooMany  = errors.New("too many samplers")
	errNoSample = errors.New("no such sampler (never started, or forgotten after it stopped)")
)

// stop stops id's sampler (once) and keeps its figures for keep; nil when id is unknown.
func (ss *samplers) stop(id string) *held {
	ss.mu.Lock()
	h := ss.byID[id]
	ss.mu.Unlock()
	if h == nil {
		return nil
	}
	// once: a DELETE and the timer at MaxSampling may come together, and Sampler.Stop is not
	// safe for two callers at once; the second waits for the first's figures
	h.once.Do(func() {
		h.timer.Stop()
		r := h.sampler.Stop()
		ss.mu.Lock()
		defer ss.mu.Unlock()
		h.stopped, h.until = &r, time.Now().Add(ss.keep)
		ss.keepAtMost(MaxStopped)
	})
	return h
}

// keepAtMost forgets the stopped samplers that stopped first beyond n; ss.mu is held.
func (ss *samplers) keepAtMost(n int) {
	for {
		oldest, stopped := "", 0
		for id, h := range ss.byID {
			if h.stopped == nil {
				continue
			}
			stopped++
			if oldest == "" || h.until.Before(ss.byID[oldest].until) {
				oldest = id
			}
		}
		if stopped <= n {
			return
		}
		delete(ss.byID, oldest)
	}
}

// get is id's sampler, nil when unknown or forgotten.
func (ss *samplers) get(id string) *held {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.forgetExpired(time.Now())
	return ss.byID[id]
}

// forgetExpired drops stopped samplers kept past their time; ss.mu is held.
func (ss *samplers) forgetExpired(now time.Time) {
	for id, h := range ss.byID {
		if h.stopped != nil && now.After(h.until) {
			delete(ss.byID, id)
		}
	}
}

func (ss *samplers) closeAll() {
	ss.mu.Lock()
	ids := make([]string, 0, len(ss.byID))
	for id := range ss.byID {
		ids = append(ids, id)
	}
	ss.mu.Unlock()
	for _, id := range ids {
		ss.stop(id)
	}
}

// answer is h's Sample; a window [from, to] (RFC 3339, the stack host's clock) once stopped.
func (ss *samplers) answer(id string, h *held, from, to string) (Sample, error) {
	ss.mu.Lock()
	out := Sample{ID: id, Target: h.target, PID: h.pid, Running: h.stopped == nil, Resources: h.stopped}
	ss.mu.Unlock()
	if from == "" && to == "" {
		return out, nil
	}
	f, err1 := time.Parse(time.RFC3339Nano, from)
	t, err2 := time.Parse(time.RFC3339Nano, to)
	if err := errors.Join(err1, err2); err != nil {
		return out, fmt.Errorf("from, to: RFC 3339 times both: %w", err)
	}
	if out.Running {
		return out, errors.New("from, to: a window is read once the sampler stopped (DELETE it)")
	}
	w, ok := h.sampler.Window(f, t)
	if !ok {
		out.WindowErr = "fewer than two samples in the window"
		return out, nil
	}
	out.Window = &w
	return out, nil
}

// sampleRequest is POST /v1/samples's body.
type sampleRequest struct {
	Target string `json:"target"`
}

// startSample starts a sampler on an up target's process tree: 201 {"id":…}.
func (a *Agent) startSample(w http.ResponseWriter, r *http.Request) {
	var req sampleRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if err := a.knownTarget(req.Target); err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	st, status, err := a.upState()
	if err != nil {
		fail(w, status, err)
		return
	}
	if !st.IsUp(req.Target) {
		fail(w, http.StatusConflict, fmt.Errorf("target %s is not up", req.Target))
		return
	}
	pid := st.Targets[req.Target].PID
	id, err := a.samples.start(req.Target, pid, st.Targets[stack.Direct].PID)
	switch {
	case errors.Is(err, errTooMany):
		fail(w, http.StatusTooManyRequests, err)
		return
	case err != nil:
		fail(w, http.StatusConflict, err)
		return
	}
	reply(w, http.StatusCreated, Sample{ID: id, Target: req.Target, PID: pid, Running: true})
}

// readSample is a sampler's Sample; ?from=&to= its Window once stopped.
func (a *Agent) readSample(w http.ResponseWriter, r *http.Request) {
	a.answerSample(w, r, a.samples.get(r.PathValue("id")))
}

// stopSample stops a sampler and answers its figures, kept KeepStopped for a window's GET.
func (a *Agent) stopSample(w http.ResponseWriter, r *http.Request) {
	a.answerSample(w, r, a.samples.stop(r.PathValue("id")))
}

func (a *Agent) answerSample(w http.ResponseWriter, r *http.Request, h *held) {
	id := r.PathValue("id")
	if h == nil {
		fail(w, http.StatusNotFound, fmt.Errorf("sampler %q: %w", id, errNoSample))
		return
	}
	q := r.URL.Query()
	out, err := a.samples.answer(id, h, q.Get("from"), q.Get("to"))
	if err != nil {
		fail(w, http.StatusBadRequest, err)
		return
	}
	reply(w, http.StatusOK, out)
}

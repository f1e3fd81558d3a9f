package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// burn spins this process (the state's nginx) for d, and says how many times it looped.
func burn(d time.Duration) int {
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		n++
	}
	return n
}

func TestSamplerCountsTheTargetsCPU(t *testing.T) {
	t.Parallel()
	ta := newTestAgent(t)
	tok := ta.token.Token
	from := time.Now()
	status, body := ta.do(t, "POST", "/v1/samples", `{"target":"nginx"}`, tok)
	var started Sample
	if err := json.Unmarshal(body, &started); status != http.StatusCreated || err != nil || started.ID == "" {
		t.Fatalf("POST /v1/samples: %d %s %v", status, body, err)
	}
	status, body = ta.do(t, "GET", "/v1/samples/"+started.ID, "", tok)
	var running Sample
	if err := json.Unmarshal(body, &running); status != http.StatusOK || err != nil || !running.Running || running.Resources != nil {
		t.Errorf("GET a running sampler: %d %s %v; want running, no figures yet", status, body, err)
	}
	window := "?from=" + url.QueryEscape(from.Format(time.RFC3339Nano)) + "&to=" + url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339Nano))
	if status, body = ta.do(t, "GET", "/v1/samples/"+started.ID+window, "", tok); status != http.StatusBadRequest {
		t.Errorf("GET a running sampler's window: %d %s; want 400", status, body)
	}
	if burn(time.Second) == 0 {
		t.Fatal("burn spun no loop")
	}
	status, body = ta.do(t, "DELETE", "/v1/samples/"+started.ID, "", tok)
	var stopped Sample
	if err := json.Unmarshal(body, &stopped); status != http.StatusOK || err != nil || stopped.Running || stopped.Resources == nil {
		t.Fatalf("DELETE /v1/samples/%s: %d %s %v", started.ID, status, body, err)
	}
	if r := stopped.Resources; r.TargetCPUSeconds <= 0 || r.Samples < 2 || r.RSSPeakMB <= 0 {
		t.Errorf("after a second of burnt CPU: %+v; want CPU > 0, 2 samples or more, an RSS", *r)
	}
	status, body = ta.do(t, "GET", "/v1/samples/"+started.ID+window, "", tok)
	var w Sample
	if err := json.Unmarshal(body, &w); status != http.StatusOK || err != nil || w.Window == nil {
		t.Fatalf("GET the stopped sampler's window: %d %s %v", status, body, err)
	}
	if w.Window.CPUSeconds <= 0 || w.Window.Samples < 2 || *w.Resources != *stopped.Resources {
		t.Errorf("window %+v of %+v; want CPU > 0 over 2 samples or more, the figures DELETE gave", *w.Window, *w.Resources)
	}
}

func TestSamplersAreCapped(t *testing.T) {
	t.Parallel()
	ta := newTestAgent(t)
	tok := ta.token.Token
	var ids []string
	for i := range MaxSamplers + 1 {
		status, body := ta.do(t, "POST", "/v1/samples", `{"target":"nginx"}`, tok)
		if i == MaxSamplers {
			if status != http.StatusTooManyRequests || !strings.Contains(string(body), fmt.Sprintf("%d samplers run already", MaxSamplers)) {
				t.Errorf("sampler %d: %d %s; want 429", i+1, status, body)
			}
			break
		}
		var s Sample
		if err := json.Unmarshal(body, &s); status != http.StatusCreated || err != nil {
			t.Fatalf("sampler %d: %d %s %v", i+1, status, body, err)
		}
		ids = append(ids, s.ID)
	}
	// a stopped one frees its place
	if status, body := ta.do(t, "DELETE", "/v1/samples/"+ids[0], "", tok); status != http.StatusOK {
		t.Fatalf("DELETE: %d %s", status, body)
	}
	if status, body := ta.do(t, "POST", "/v1/samples", `{"target":"nginx"}`, tok); status != http.StatusCreated {
		t.Errorf("a sampler after one stopped: %d %s; want 201", status, body)
	}
}

func TestSamplerStopsItself(t *testing.T) {
	t.Parallel()
	ss := newSamplers(1, 300*time.Millisecond, time.Hour)
	defer ss.closeAll()
	id, err := ss.start("nginx", os.Getpid(), 0)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if h := ss.get(id); h != nil {
			if s, _ := ss.answer(id, h, "", ""); !s.Running && s.Resources != nil {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Error("a sampler past its longest run still runs")
}

func TestStoppedSamplersAreForgotten(t *testing.T) {
	t.Parallel()
	ss := newSamplers(MaxStopped+1, time.Hour, time.Hour)
	defer ss.closeAll()
	var ids []string
	for range MaxStopped + 1 {
		id, err := ss.start("nginx", os.Getpid(), 0)
		if err != nil {
			t.Fatal(err)
		}
		ss.stop(id)
		ids = append(ids, id)
	}
	if ss.get(ids[0]) != nil || ss.get(ids[1]) == nil {
		t.Errorf("past %d stopped samplers: want the first stopped forgotten, the next kept", MaxStopped)
	}
	ss.mu.Lock()
	ss.forgetExpired(time.Now().Add(2 * time.Hour))
	left := len(ss.byID)
	ss.mu.Unlock()
	if left != 0 {
		t.Errorf("%d stopped samplers kept past their time", left)
	}
}

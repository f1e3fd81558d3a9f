package observe

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// A dashboard is read in headless Chromium once Grafana has drawn it: Chromium's
// --virtual-time-budget does not wait for the queries (InfluxDB's percentile queries take
// seconds), so the page is driven over the DevTools protocol instead: navigate, wait until every
// panel has stopped loading, then take the DOM and a screenshot of the same page.

// cdp is one DevTools session on one page of a headless Chromium the test started.
type cdp struct {
	cmd     *exec.Cmd
	conn    *websocket.Conn
	session string
	id      int
	failed  []failedResponse // answers of 400 and above the page received, and the data source's
}

// failedResponse is an answer of the page that failed, or a data source's (which says a
// failed statement in a 200): what a panel's error corner says.
type failedResponse struct {
	requestID, url string
	status         int
}

var devtoolsURL = regexp.MustCompile(`DevTools listening on (ws://\S+)`)

func startChromium(t *testing.T, browser string, width, height int) *cdp {
	t.Helper()
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
		"--disable-extensions", "--no-default-browser-check", "--hide-scrollbars", "--remote-debugging-port=0",
		fmt.Sprintf("--window-size=%d,%d", width, height), "--user-data-dir="+t.TempDir(), "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its renderers end with it
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	c := &cdp{cmd: cmd}
	t.Cleanup(c.close)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := devtoolsURL.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var ws string
	select {
	case ws = <-found:
	case <-time.After(30 * time.Second):
		t.Fatal("chromium did not open its DevTools endpoint within 30 s")
	}
	if c.conn, _, err = websocket.DefaultDialer.Dial(ws, nil); err != nil {
		t.Fatalf("DevTools %s: %v", ws, err)
	}
	var target struct {
		TargetID string `json:"targetId"`
	}
	c.call(t, "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	c.call(t, "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	c.session = attached.SessionID
	c.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false,
	}, nil)
	return c
}

// call sends one command (to the page's session once attached) and decodes its result; events
// arriving meanwhile are skipped.
func (c *cdp) call(t *testing.T, method string, params, out any) {
	t.Helper()
	if err := c.do(method, params, out); err != nil {
		t.Fatal(err)
	}
}

func (c *cdp) do(method string, params, out any) error {
	c.id++
	msg := map[string]any{"id": c.id, "method": method, "params": params}
	if c.session != "" {
		msg["sessionId"] = c.session
	}
	_ = c.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if err := c.conn.WriteJSON(msg); err != nil {
		return fmt.Errorf("DevTools %s: %w", method, err)
	}
	for {
		_ = c.conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		var resp struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := c.conn.ReadJSON(&resp); err != nil {
			return fmt.Errorf("DevTools %s: %w", method, err)
		}
		if resp.Method == "Network.responseReceived" {
			var ev struct {
				RequestID string `json:"requestId"`
				Response  struct {
					URL    string `json:"url"`
					Status int    `json:"status"`
				} `json:"response"`
			}
			// InfluxDB says a statement failed in a 200 answer: every data source answer is read
			if json.Unmarshal(resp.Params, &ev) == nil && (ev.Response.Status >= 400 ||
				strings.Contains(ev.Response.URL, "/api/datasources/proxy/") || strings.Contains(ev.Response.URL, "/api/ds/query")) {
				c.failed = append(c.failed, failedResponse{ev.RequestID, ev.Response.URL, ev.Response.Status})
			}
		}
		if resp.ID != c.id {
			continue
		}
		if resp.Error != nil {
			return fmt.Errorf("DevTools %s: %s", method, resp.Error.Message)
		}
		if out != nil {
			if err := json.Unmarshal(resp.Result, out); err != nil {
				return fmt.Errorf("DevTools %s: %w", method, err)
			}
		}
		return nil
	}
}

// eval evaluates a JavaScript expression in the page and returns its string value.
func (c *cdp) eval(t *testing.T, expr string) string {
	t.Helper()
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	c.call(t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r)
	s, _ := r.Result.Value.(string)
	return s
}

// drawn is "panels:loading:empty": how many panels the page has, how many are still loading
// and how many say "No data".
const drawn = `(() => { const ps = [...document.querySelectorAll('[aria-label$=" panel"]')];
	return ps.length + ":" + document.querySelectorAll('.panel-loading').length + ":" +
		ps.filter(p => p.innerText.includes("No data")).length; })()`

// load opens url and waits until Grafana has drawn it: panels on the page, none loading and
// none saying "No data", three times in a row a second apart (a panel starts loading only once
// the variables are read, and on a busy machine a slow one has been seen to say "No data" for
// a while between). Until limit: then the page is read as it is. It returns the page's DOM
// and writes its screenshot to shot.
func (c *cdp) load(t *testing.T, url, shot string, limit time.Duration) string {
	t.Helper()
	c.failed = nil
	c.call(t, "Page.enable", map[string]any{}, nil)
	c.call(t, "Network.enable", map[string]any{}, nil)
	c.call(t, "Page.navigate", map[string]any{"url": url}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	const settled = 3 // polls in a row with every panel drawn
	// polls with nothing loading that still show "No data": past this many, it stays
	const stuck = 15
	quiet, empty := 0, 0
	state := ""
	for quiet < settled {
		select {
		case <-ctx.Done():
			t.Logf("%s: not settled after %v (panels:loading:no data %s): read as it is", url, limit, state)
			quiet = settled
			continue
		case <-time.After(time.Second):
		}
		state = c.eval(t, drawn)
		f := strings.Split(state, ":")
		switch {
		case len(f) == 3 && f[0] != "0" && f[1] == "0" && f[2] == "0":
			quiet++
		case len(f) == 3 && f[0] != "0" && f[1] == "0":
			quiet = 0
			if empty++; empty >= stuck {
				quiet = settled // read as it is
			}
		default:
			quiet, empty = 0, 0
		}
	}
	c.errorTexts(t, url)
	dom := c.eval(t, "document.documentElement.outerHTML")
	// the answers that failed, for the panels whose corner shows an error
	for _, f := range c.failed {
		var body struct {
			Body string `json:"body"`
		}
		if err := c.do("Network.getResponseBody", map[string]any{"requestId": f.requestID}, &body); err != nil {
			body.Body = err.Error()
		}
		if f.status >= 400 || strings.Contains(body.Body, `"error"`) {
			t.Logf("%s: HTTP %d from %s: %.800s", url, f.status, f.url, body.Body)
		}
	}
	var png struct {
		Data string `json:"data"`
	}
	c.call(t, "Page.captureScreenshot", map[string]any{"format": "png"}, &png)
	data, err := base64.StdEncoding.DecodeString(png.Data)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(shot, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dom
}

// close ends Chromium: the DevTools connection, then its process group by its pid.
func (c *cdp) close() {
	if c.conn != nil {
		_ = c.conn.Close()
	}
	if c.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// errorTexts logs what each panel's error corner says: its tooltip, shown on hover.
func (c *cdp) errorTexts(t *testing.T, url string) {
	t.Helper()
	var corners []struct{ X, Y float64 }
	raw := c.eval(t, `JSON.stringify([...document.querySelectorAll('.panel-info-corner--error')].map(e => {
		const r = e.getBoundingClientRect(); return {X: r.x + r.width / 3, Y: r.y + r.height / 3}; }))`)
	if json.Unmarshal([]byte(raw), &corners) != nil {
		return
	}
	for _, p := range corners {
		c.call(t, "Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": p.X, "y": p.Y}, nil)
		time.Sleep(700 * time.Millisecond)
		if text := c.eval(t, `[...document.querySelectorAll('[role="tooltip"], .tooltip, [class*="tooltip"]')].map(e => e.innerText).join(" | ")`); text != "" {
			t.Logf("%s: a panel's error: %q", url, text)
		}
	}
}

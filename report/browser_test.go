package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestReportInBrowser opens report.html in a real browser (Debian's chromium, headless) and
// checks from the rendered page that every chart drew, with one series per target, and that
// the page fetched nothing but itself. A screenshot is kept for a person to look at.
//
// The page is served by a local server that is also the browser's proxy for everything
// (loopback included), so any request made, to any host, reaches it and is logged (and
// refused: nothing leaves the machine). Chromium itself calls a few Google services whatever
// page it shows (component updater, sign-in; flags silence the others): requests to those
// exact hosts without the page as Referer are set apart as the browser's own; any other
// request than the page itself fails the test. Inside the page, the Resource Timing API must
// count no fetched resource, and TestHTMLSelfContained checks the markup for any URL.
// TestBrowserCatchesOutsideLoads proves the watch works on a page that does load things.
// The test fails, not skips, without chromium: `make test-deps` installs it.
func TestReportInBrowser(t *testing.T) {
	browser := chromium(t)
	b := synthBench()
	dir := t.TempDir()
	if err := Write(dir, b); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	w := watchPage(t, page)

	// Dump the DOM after the page ran its measuring script.
	dom := runChromium(t, browser, w.URL, "--dump-dom", w.Page)
	if f := regexp.MustCompile(`data-resources-fetched="(\d+)"`).FindStringSubmatch(dom); f == nil || f[1] != "0" {
		t.Errorf("the page counts resources it fetched: %v, want 0", f)
	}
	drawn := regexp.MustCompile(`data-charts-drawn="(\d+)"`).FindStringSubmatch(dom)
	if drawn == nil || drawn[1] != "4" {
		t.Fatalf("the page's script did not run or found the wrong number of charts: %v", drawn)
	}
	charts := regexp.MustCompile(`(?s)<svg [^>]*class="chart"[^>]*>.*?</svg>`).FindAllString(dom, -1)
	if len(charts) != 4 {
		t.Fatalf("%d charts in the rendered DOM, want 4", len(charts))
	}
	targets := b.Targets()
	for _, svg := range charts {
		open := svg[:strings.IndexByte(svg, '>')]
		id := attr(open, "id")
		w, h := size(attr(open, "data-drawn"))
		if w < 300 || h < 100 {
			t.Errorf("%s drew %dx%d", id, w, h)
		}
		var got []string
		for _, g := range regexp.MustCompile(`<g class="series"[^>]*>`).FindAllString(svg, -1) {
			tg := attr(g, "data-target")
			got = append(got, tg)
			bw, bh := size(attr(g, "data-bbox"))
			bars, _ := strconv.Atoi(attr(g, "data-bars"))
			if bw <= 0 || bh <= 0 || bars == 0 {
				t.Errorf("%s: series %s drew nothing (bbox %dx%d, %d bars)", id, tg, bw, bh, bars)
			}
		}
		if strings.Join(got, ",") != strings.Join(targets, ",") {
			t.Errorf("%s: series %v, want one per target %v", id, got, targets)
		}
		if !strings.Contains(svg, `class="legend"`) || !strings.Contains(svg, `class="axis y"`) {
			t.Errorf("%s: no legend or axis", id)
		}
	}

	checkFirstScreen(t, browser, w, b)

	// A screenshot for people, kept with the test output.
	out := os.Getenv("PROXYBENCH_TEST_ARTIFACTS")
	if out == "" {
		out = filepath.Join("..", "results", "test-artifacts")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	shot, err := filepath.Abs(filepath.Join(out, "report.png"))
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(shot)
	runChromium(t, browser, w.URL, "--screenshot="+shot, "--window-size=1280,2000", "--hide-scrollbars", w.Page)
	checkScreenshot(t, shot, 1280, 2000)
	// And the whole page, for whoever wants to see every chart at once.
	if m := regexp.MustCompile(`data-page-height="(\d+)"`).FindStringSubmatch(dom); m != nil {
		h, _ := strconv.Atoi(m[1])
		h = min(max(h, 2000), 16000)
		full := filepath.Join(filepath.Dir(shot), "report-full.png")
		runChromium(t, browser, w.URL, "--screenshot="+full, fmt.Sprintf("--window-size=1280,%d", h), "--hide-scrollbars", w.Page)
		checkScreenshot(t, full, 1280, h)
		t.Logf("whole page: %s", full)
	}
	first := filepath.Join(filepath.Dir(shot), "report-first-screen.png")
	runChromium(t, browser, w.URL, "--screenshot="+first, "--window-size=1400,900", "--hide-scrollbars", w.Page)
	checkScreenshot(t, first, 1400, 900)
	_ = os.WriteFile(filepath.Join(out, "report.html"), page, 0o644)
	t.Logf("screenshot: %s (page: %s)", shot, filepath.Join(filepath.Dir(shot), "report.html"))

	requests, own := w.seen()
	want := "GET " + w.Host + "/report.html"
	if len(requests) < 2 || slices.ContainsFunc(requests, func(r string) bool { return r != want }) {
		t.Errorf("requests seen = %q, want only the page, once per browser run (%s)", requests, want)
	}
	if len(own) > 0 {
		t.Logf("Chromium's own service calls, refused by the proxy: %q", own)
	}
}

// TestBrowserCatchesOutsideLoads is the watch's control: a page that loads an image from
// another host, a script from its own and a font through CSS is caught on all three.
func TestBrowserCatchesOutsideLoads(t *testing.T) {
	browser := chromium(t)
	page := []byte(`<!doctype html><html><head><link rel="icon" href="data:,">` +
		`<style>@font-face { font-family: x; src: url(/font.woff2); } body { font-family: x; }</style>` +
		`<script src="/app.js"></script></head><body>text<img src="http://cdn.example/pixel.png"></body></html>`)
	w := watchPage(t, page)
	dom := runChromium(t, browser, w.URL, "--dump-dom", w.Page)
	if !strings.Contains(dom, "pixel.png") {
		t.Fatalf("the control page did not render: %s", dom)
	}
	requests, _ := w.seen()
	for _, want := range []string{"GET cdn.example/pixel.png", "GET " + w.Host + "/app.js", "GET " + w.Host + "/font.woff2"} {
		found := false
		for _, r := range requests {
			found = found || r == want
		}
		if !found {
			t.Errorf("the watch missed %q; it saw %q", want, requests)
		}
	}
}

func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Chromium (make test-deps): not in the fast tier, go test -short")
	}
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (%v): run `make test-deps` (report/install-chromium.sh)", err)
	}
	return browser
}

// watch serves one page and is the browser's proxy for everything else, logging each request.
type watch struct {
	URL, Host, Page string // proxy URL, its host:port, the page's URL
	mu              sync.Mutex
	requests, own   []string
}

func watchPage(t *testing.T, page []byte) *watch {
	t.Helper()
	w := &watch{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil && r.Method == http.MethodConnect {
			host = h
		}
		req := r.Method + " " + r.Host + r.URL.Path
		w.mu.Lock()
		if browserServices[host] && r.Header.Get("Referer") == "" {
			w.own = append(w.own, req)
		} else {
			w.requests = append(w.requests, req)
		}
		w.mu.Unlock()
		if r.Method == http.MethodGet && r.Host == w.Host && r.URL.Path == "/report.html" {
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = rw.Write(page) // the browser's side of the test sees a short page
			return
		}
		http.Error(rw, "the report must load nothing else", http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	w.URL = srv.URL
	w.Host = strings.TrimPrefix(srv.URL, "http://")
	w.Page = srv.URL + "/report.html"
	return w
}

func (w *watch) seen() (requests, own []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, w.requests...), append([]string{}, w.own...)
}

// runChromium runs headless chromium once with every request sent through proxy, and
// returns its stdout.
func runChromium(t *testing.T, browser, proxy string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-extensions", "--metrics-recording-only", "--no-default-browser-check",
		"--disable-domain-reliability", "--disable-client-side-phishing-detection", "--no-pings",
		"--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate,AutofillServerCommunication",
		"--user-data-dir=" + t.TempDir(),
		// Everything through our logging server, loopback included (Chromium bypasses the
		// proxy for loopback unless told "<-loopback>").
		"--proxy-server=" + proxy, "--proxy-bypass-list=<-loopback>",
	}
	cmd := exec.CommandContext(ctx, browser, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

// checkFirstScreen opens the page in a 1400×900 window, as a person would, and checks that
// the first screen holds both charts of every protocol that ran (the cost chart, and p99 at
// equal load where the protocol had a pass) above the fold; then in a 1280 px one, that nothing
// makes the page wider than the window: a wide table scrolls inside its own box.
func checkFirstScreen(t *testing.T, browser string, w *watch, b *Bench) {
	t.Helper()
	dom := runChromium(t, browser, w.URL, "--window-size=1400,900", "--dump-dom", w.Page)
	// headless Chromium's page is as wide as the window, and less high (its window has a frame)
	if w, _ := size(rootAttr(dom, "data-viewport")); w != 1400 {
		t.Fatalf("the page was laid out %d px wide, not in the 1400 px window asked for", w)
	}
	g := firstScreen(b)
	sections := regexp.MustCompile(`(?s)<section class="proto" data-proto="([^"]+)">(.*?)</section>`).FindAllStringSubmatch(dom, -1)
	var protos []string
	for _, s := range sections {
		protos = append(protos, s[1])
	}
	if want := glanceProtos(b); strings.Join(protos, ",") != strings.Join(want, ",") || len(want) == 0 {
		t.Errorf("first-screen columns %v, want one per protocol that ran %v", protos, want)
	}
	for i, s := range sections {
		var ids []string
		for _, svg := range regexp.MustCompile(`<svg [^>]*class="mini"[^>]*>`).FindAllString(s[2], -1) {
			id := attr(svg, "id")
			ids = append(ids, id)
			bottom, _ := strconv.Atoi(attr(svg, "data-bottom"))
			if w, h := size(attr(svg, "data-drawn")); w < 250 || h < 40 || bottom <= 0 || bottom > 900 {
				t.Errorf("%s drew %dx%d ending at %d px: not within the first 900 px", id, w, h, bottom)
			}
		}
		var want []string
		if i < len(g.Protos) {
			for _, m := range []*miniChart{&g.Protos[i].Cost, g.Protos[i].P99} {
				if m != nil {
					want = append(want, m.ID)
				}
			}
		}
		if strings.Join(ids, ",") != strings.Join(want, ",") {
			t.Errorf("%s: charts %v, want %v", s[1], ids, want)
		}
	}

	dom = runChromium(t, browser, w.URL, "--window-size=1280,900", "--dump-dom", w.Page)
	if w, _ := size(rootAttr(dom, "data-viewport")); w != 1280 {
		t.Fatalf("the page was laid out %d px wide, not in the 1280 px window asked for", w)
	}
	// the page's width against the window's less any scrollbar
	var page, window int
	if _, err := fmt.Sscanf(rootAttr(dom, "data-scroll-width"), "%d/%d", &page, &window); err != nil || window < 1200 || page > window {
		t.Errorf("at 1280 px the page is %d px wide in a %d px window (%v): something overflows", page, window, err)
	}
	if n := rootAttr(dom, "data-boxes-wider"); n != "0" {
		t.Errorf("%s table boxes reach past the window at 1280 px", n)
	}
}

// rootAttr is an attribute of the dumped page's <html> element.
func rootAttr(dom, name string) string {
	return attr(regexp.MustCompile(`<html[^>]*>`).FindString(dom), name)
}

func attr(tag, name string) string {
	m := regexp.MustCompile(`\s` + regexp.QuoteMeta(name) + `="([^"]*)"`).FindStringSubmatch(tag)
	if m == nil {
		return ""
	}
	return m[1]
}

func size(s string) (int, int) {
	var w, h int
	_, _ = fmt.Sscanf(s, "%dx%d", &w, &h) // 0x0 for a size it cannot read
	return w, h
}

// checkScreenshot makes sure the screenshot is a width×height picture with something on it.
func checkScreenshot(t *testing.T, path string, width, height int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != width || b.Dy() != height {
		t.Errorf("screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), width, height)
	}
	if n := colours(img); n < 8 {
		t.Errorf("screenshot has %d colours: blank?", n)
	}
}

func colours(img image.Image) int {
	seen := map[[3]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	return len(seen)
}

// browserServices are the hosts Chromium calls on its own in headless mode whatever it shows,
// with the flags of runChromium (component updater, sign-in). A page naming one of them would
// still be caught by the markup check (TestHTMLSelfContained), by Resource Timing and, over
// plain HTTP, by its Referer.
var browserServices = map[string]bool{
	"update.googleapis.com": true, "accounts.google.com": true, "clients2.google.com": true,
}

// Command podcurl stands in for curl in the k6-operator's starter pod, whose image has
// busybox, with no curl, and a wget that cannot PATCH. It takes only the command line the
// operator gives curl (v1.6.0, pkg/resources/containers/curl_start.go), one per runner:
//
//	curl --retry 3 -X PATCH -H 'Content-Type: application/json' http://<ip>:6565/v1/status \
//	  -d '{"data":{"attributes":{"paused":false},"id":"default","type":"status"}}' \
//	  -s -w '<newline>{"http_code":%{http_code},"time_total":%{time_total},…}'
//
// and does what curl does with it: the body and the -w text on stdout, exit 0 on any HTTP
// status, curl's exit codes otherwise (7: cannot connect), retries as --retry has them. Any
// other option is refused (exit 2). It adds one JSON line on stderr per response, even with -s:
//
//	{"podcurl":"PATCH http://…/v1/status","status":200,"unix_ns":…}
//
// unix_ns being when the response's header came: when that runner resumed. A request that
// got no response has status 0 and an "error".
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strconv"
	"syscall"
	"time"
)

func main() {
	os.Exit(curl{sleep: time.Sleep}.run(os.Args[1:], os.Stdout, os.Stderr))
}

// curl's exit codes
const (
	exitUsage   = 2
	exitResolve = 6
	exitConnect = 7
	exitTimeout = 28
	exitEmpty   = 52
	exitRecv    = 56
)

type curl struct {
	sleep func(time.Duration) // between retries
}

func (c curl) run(args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args)
	if err != nil {
		fmt.Fprintln(stderr, "podcurl:", err)
		return exitUsage
	}
	client := &http.Client{
		Transport: &http.Transport{
			// no proxy: the operator's pods set none; curl's connect timeout
			DialContext:        (&net.Dialer{Timeout: 300 * time.Second}).DialContext,
			DisableCompression: true,
		},
		// curl follows no redirect without -L
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	delay := time.Second
	for left := o.retry; ; left-- {
		t, code, retryAfter := attempt(client, o, stdout, stderr)
		if code != 0 && !o.silent {
			fmt.Fprintf(stderr, "curl: (%d) %s\n", code, t.err)
		}
		// --retry takes a timeout, a host not resolved and these statuses as transient, not
		// a refused connection (that is --retry-connrefused, which the operator does not give)
		problem := map[int]string{exitTimeout: "timeout", exitResolve: "timeout"}[code]
		if code == 0 && map[int]bool{408: true, 429: true, 500: true, 502: true, 503: true, 504: true}[t.status] {
			problem = "HTTP error"
		}
		if problem == "" || left == 0 {
			out, _ := writeOut(o.writeOut, t)
			// unchecked, as curl leaves its -w output: the exit code is the transfer's, and a
			// stdout that fails has nowhere else to be told
			_, _ = io.WriteString(stdout, out)
			return code
		}
		wait := max(delay, retryAfter)
		if !o.silent {
			fmt.Fprintf(stderr, "Warning: Problem : %s. Will retry in %d seconds. %d retries left.\n", problem, wait/time.Second, left)
		}
		c.sleep(wait)
		delay = min(2*delay, 10*time.Minute)
	}
}

// attempt sends the request once, copies the response's body to stdout, and returns what the
// -w variables need, curl's exit code, and the Retry-After the response asked for.
func attempt(client *http.Client, o options, stdout, stderr io.Writer) (transfer, int, time.Duration) {
	t := transfer{url: o.url.String()}
	req, err := o.request()
	if err != nil {
		t.err = err.Error()
		return t, exitUsage, 0
	}
	start := time.Now()
	req = req.WithContext(httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if a, ok := info.Conn.RemoteAddr().(*net.TCPAddr); ok {
				t.remoteIP = a.IP.String()
			}
		},
		GotFirstResponseByte: func() { t.tfb = time.Since(start) },
	}))
	resp, err := client.Do(req)
	came := time.Now()
	if err != nil {
		code, msg := curlError(err, o, came.Sub(start))
		t.total, t.err = came.Sub(start), msg
		logResponse(stderr, req.Method+" "+t.url, 0, came, msg)
		return t, code, 0
	}
	defer resp.Body.Close()
	t.status = resp.StatusCode
	logResponse(stderr, req.Method+" "+t.url, resp.StatusCode, came, "")
	_, err = io.Copy(stdout, resp.Body)
	t.total = time.Since(start)
	if err != nil {
		t.err = "Recv failure: " + err.Error()
		return t, exitRecv, 0
	}
	retryAfter, _ := strconv.Atoi(resp.Header.Get("Retry-After")) // curl takes the seconds form only too
	return t, 0, time.Duration(retryAfter) * time.Second
}

// curlError is curl's exit code and message for a request that got no response.
func curlError(err error, o options, took time.Duration) (int, string) {
	port := o.url.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[o.url.Scheme]
	}
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var errno syscall.Errno
	switch {
	case errors.As(err, &dnsErr):
		return exitResolve, "Could not resolve host: " + o.url.Hostname()
	case errors.As(err, &opErr) && opErr.Op == "dial" && opErr.Timeout():
		return exitTimeout, fmt.Sprintf("Connection timed out after %d milliseconds", took.Milliseconds())
	case errors.As(err, &opErr) && opErr.Op == "dial":
		cause := opErr.Err.Error()
		if errors.As(err, &errno) {
			cause = errno.Error()
		}
		return exitConnect, fmt.Sprintf("Failed to connect to %s port %s after %d ms: %s", o.url.Hostname(), port, took.Milliseconds(), cause)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return exitEmpty, "Empty reply from server"
	}
	return exitRecv, "Recv failure: " + err.Error()
}

// logResponse writes podcurl's own line on stderr.
func logResponse(stderr io.Writer, request string, status int, came time.Time, errMsg string) {
	line, _ := json.Marshal(struct {
		Request string `json:"podcurl"`
		Status  int    `json:"status"`
		UnixNS  int64  `json:"unix_ns"`
		Error   string `json:"error,omitempty"`
	}{request, status, came.UnixNano(), errMsg})
	fmt.Fprintf(stderr, "%s\n", line)
}

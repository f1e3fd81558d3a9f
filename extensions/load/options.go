package load

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// Protocols the native loop speaks, by proxybench's names (scenarios/lib/protocols.js), and
// the proto tag k6/http gives their responses.
var protoNames = map[string]string{
	"h1c": "HTTP/1.1", // cleartext HTTP/1.1
	"h1":  "HTTP/1.1", // HTTP/1.1 over TLS (ALPN http/1.1)
	"h2":  "HTTP/2.0", // HTTP/2 over TLS (ALPN h2)
}

// defaultTimeout is k6/http's: a request with no answer in it fails.
const defaultTimeout = 60 * time.Second

// Options is what a script passes to client(): one GET, sent over and over on the VU's
// connection, and what every answer must be.
type Options struct {
	URL         string            `js:"url"`         // http:// for h1c, https:// for h1 and h2
	Proto       string            `js:"proto"`       // h1c, h1 or h2
	Streams     int               `js:"streams"`     // h2: concurrent streams on the connection (default 1)
	ExpectBytes int               `js:"expectBytes"` // the exact body size every answer must have
	Expect      string            `js:"expect"`      // the body every answer must be, byte for byte (its UTF-8); "": the size alone
	Check       string            `js:"check"`       // the name of the check every answer is counted in
	Timeout     int               `js:"timeout"`     // ms a request may take (default 60000, k6/http's)
	Tags        map[string]string `js:"tags"`        // extra tags on every sample (route, name, …)
}

// plan is Options checked and prepared: what the loops read for every request.
type plan struct {
	Options
	u        *url.URL
	addr     string // host:port to dial (the hosts option maps the name)
	host     string // the TLS server name
	tls      bool
	protoTag string // HTTP/1.1 or HTTP/2.0
	timeout  time.Duration
	expect   []byte // Expect's bytes, compared with every body as it is read; nil: none
}

// newPlan checks o, naming the option at fault.
func newPlan(o Options) (*plan, error) {
	p := &plan{Options: o}
	var ok bool
	if p.protoTag, ok = protoNames[o.Proto]; !ok {
		return nil, fmt.Errorf("client: proto %q: the native loop speaks h1c, h1 and h2 (h3 runs on k6/x/proxybench/http3)", o.Proto)
	}
	u, err := url.Parse(o.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("client: url %q is not an absolute URL", o.URL)
	}
	p.u = u
	wantScheme := "https"
	if o.Proto == "h1c" {
		wantScheme = "http"
	}
	if u.Scheme != wantScheme {
		return nil, fmt.Errorf("client: url %q: proto %s needs a %s:// URL", o.URL, o.Proto, wantScheme)
	}
	p.tls = u.Scheme == "https"
	p.host = u.Hostname()
	port := u.Port()
	if port == "" {
		port = map[bool]string{true: "443", false: "80"}[p.tls]
	}
	p.addr = net.JoinHostPort(p.host, port)
	switch {
	case p.Streams == 0:
		p.Streams = 1
	case p.Streams < 0 || (p.Streams > 1 && o.Proto != "h2"):
		return nil, fmt.Errorf("client: streams %d: 1 for HTTP/1.1 (one request at a time, no pipelining), 1 or more for h2", p.Streams)
	}
	if o.ExpectBytes < 0 {
		return nil, fmt.Errorf("client: expectBytes %d: a body size is 0 or more", o.ExpectBytes)
	}
	if o.Expect != "" {
		// the size follows from the body; given both, they must agree
		switch {
		case o.ExpectBytes == 0:
			p.ExpectBytes = len(o.Expect)
		case o.ExpectBytes != len(o.Expect):
			return nil, fmt.Errorf("client: expectBytes %d, but expect is a body of %d bytes", o.ExpectBytes, len(o.Expect))
		}
		p.expect = []byte(o.Expect)
	}
	if strings.TrimSpace(o.Check) == "" {
		return nil, fmt.Errorf("client: check: every answer is counted in a named check; give its name")
	}
	switch {
	case o.Timeout == 0:
		p.timeout = defaultTimeout
	case o.Timeout < 0:
		return nil, fmt.Errorf("client: timeout %d: milliseconds, more than 0", o.Timeout)
	default:
		p.timeout = time.Duration(o.Timeout) * time.Millisecond
	}
	return p, nil
}

// requestURI is the path and query the request line (or :path) carries.
func (p *plan) requestURI() string {
	return p.u.RequestURI()
}

// authority is the Host header (or :authority): the URL's host, with its port if it has one,
// as Go's client sends it.
func (p *plan) authority() string {
	return p.u.Host
}

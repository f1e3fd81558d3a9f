package load

import (
	"errors"
	"fmt"
	"net"
	"net/http"
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

// Options is what a script passes to client(): one request (a GET, or run()'s upload), sent
// over and over on the VU's connection, and what every answer must be.
type Options struct {
	URL          string            `js:"url"`          // http:// for h1c, https:// for h1 and h2
	Proto        string            `js:"proto"`        // h1c, h1 or h2
	Streams      int               `js:"streams"`      // h2: concurrent streams on the connection (default 1)
	ExpectBytes  int               `js:"expectBytes"`  // the exact body size every answer must have
	Expect       string            `js:"expect"`       // the body every answer must be, byte for byte (its UTF-8); "": the size alone
	ExpectRepeat string            `js:"expectRepeat"` // or: the body is this text repeated and cut at expectBytes (/bytes), compared as it is read, never held whole
	Method       string            `js:"method"`       // GET (default), or POST or PUT: an upload, run() only
	UploadBytes  int               `js:"uploadBytes"`  // POST, PUT: the request body's bytes (Content-Length)
	UploadText   string            `js:"uploadText"`   // POST, PUT: what the request body repeats (lib/bodies.js PATTERN)
	Check        string            `js:"check"`        // the name of the check every answer is counted in
	Timeout      int               `js:"timeout"`      // ms a request may take (default 60000, k6/http's)
	Tags         map[string]string `js:"tags"`         // extra tags on every sample (route, name, …)
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
	expect   content // Expect's bytes or ExpectRepeat's, compared with every body as it is read; want nil: none
	method   string  // GET, POST or PUT
	// upload is UploadText repeated: the request body is written from it, a run of repeats at
	// a time, never built whole; want nil for a GET.
	upload content
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
	switch {
	case o.Expect != "" && o.ExpectRepeat != "":
		return nil, errors.New("client: expect and expectRepeat: give the body, or the text it repeats, not both")
	case o.Expect != "":
		// the size follows from the body; given both, they must agree
		switch {
		case o.ExpectBytes == 0:
			p.ExpectBytes = len(o.Expect)
		case o.ExpectBytes != len(o.Expect):
			return nil, fmt.Errorf("client: expectBytes %d, but expect is a body of %d bytes", o.ExpectBytes, len(o.Expect))
		}
		p.expect = content{want: []byte(o.Expect)}
	case o.ExpectRepeat != "":
		p.expect = repeating(o.ExpectRepeat)
	}
	if err := p.uploads(o); err != nil {
		return nil, err
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

// uploads checks and prepares the request's method and body.
func (p *plan) uploads(o Options) error {
	p.method = strings.ToUpper(strings.TrimSpace(o.Method))
	switch p.method {
	case "":
		p.method = http.MethodGet
		fallthrough
	case http.MethodGet:
		if o.UploadBytes != 0 || o.UploadText != "" {
			return fmt.Errorf("client: uploadBytes %d: a GET sends no body; set method POST or PUT", o.UploadBytes)
		}
	case http.MethodPost, http.MethodPut:
		switch {
		case o.UploadBytes < 0:
			return fmt.Errorf("client: uploadBytes %d: a body size is 0 or more", o.UploadBytes)
		case o.UploadText == "":
			return errors.New("client: uploadText: give the text the request body repeats")
		}
		p.upload = repeating(o.UploadText)
	default:
		return fmt.Errorf("client: method %q: GET, or POST or PUT with a body of uploadBytes", o.Method)
	}
	return nil
}

// uploading tells whether the request carries a body (POST, PUT).
func (p *plan) uploading() bool { return p.upload.want != nil }

// errUploadRunOnly is fresh()'s and open()'s refusal of an upload: only run() sends bodies.
var errUploadRunOnly = errors.New("the native loop uploads in run() only: fresh() and open() send GETs")

// requestURI is the path and query the request line (or :path) carries.
func (p *plan) requestURI() string {
	return p.u.RequestURI()
}

// authority is the Host header (or :authority): the URL's host, with its port if it has one,
// as Go's client sends it.
func (p *plan) authority() string {
	return p.u.Host
}

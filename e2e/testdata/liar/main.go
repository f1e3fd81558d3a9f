// Command liar is a throwaway target of e2e/lies_test.go: a reverse proxy that flatters. It
// forwards every request to the upstream's cleartext port over HTTP/1.1 keep-alive, as every
// proxy of proxies/ does, and answers on the target's cleartext port only (h1c), but with
// -rewrite-at N it changes one byte of every body of / and /bytes at offset N into another: the same
// length, Content-Length kept, so that only a client comparing the bytes can tell. With
// -cut-over N every body longer than N bytes ends after its first N, Content-Length kept, its
// connection broken (a proxy whose read of a large body gave up mid-way); with -stall-over N
// such a body stops after N bytes and the connection stays open, silent, until the client goes
// away (a proxy that stopped forwarding).
//
// -config FILE reads more flags from FILE (the target's rendered config template): its words,
// one or more a line, as on the command line; lines starting with # are comments.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8081", "address to serve cleartext HTTP/1.1 on")
	upstream := flag.String("upstream", "127.0.0.1:9000", "the upstream's cleartext address (host:port)")
	keepalive := flag.Int("keepalive", 10000, "idle keep-alive connections kept to the upstream")
	rewriteAt := flag.Int("rewrite-at", -1, "replace the byte at this offset of every body of / and /bytes with another (-1: none)")
	cutOver := flag.Int64("cut-over", -1, "end every body longer than this many bytes after them, Content-Length kept, and break the connection (-1: none)")
	stallOver := flag.Int64("stall-over", -1, "stop every body longer than this many bytes after them and send nothing more, the connection open (-1: none)")
	version := flag.Bool("version", false, "print the version and exit")
	config := flag.String("config", "", "a file of more flags (the rendered config template)")
	flag.Parse()
	if *config != "" {
		if err := parseConfig(*config); err != nil {
			fmt.Fprintln(os.Stderr, "liar:", err)
			os.Exit(2)
		}
	}
	if *version {
		fmt.Println("liar 1.0 (proxybench e2e test target)")
		return
	}
	to := &url.URL{Scheme: "http", Host: *upstream}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(to)
			pr.Out.Host = pr.In.Host // Host preserved, as every proxy of proxies/ does
		},
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConns:        *keepalive,
			MaxIdleConnsPerHost: *keepalive,
			IdleConnTimeout:     60 * time.Second,
			DisableCompression:  true, // no Accept-Encoding added: the upstream's bytes as they are
		},
		ModifyResponse: func(res *http.Response) error {
			if p := res.Request.URL.Path; *rewriteAt >= 0 && (p == "/" || p == "/bytes") {
				res.Body = &rewriter{ReadCloser: res.Body, at: int64(*rewriteAt)}
			}
			if *cutOver >= 0 && res.ContentLength > *cutOver {
				res.Body = &cutter{ReadCloser: res.Body, left: *cutOver}
			}
			if *stallOver >= 0 && res.ContentLength > *stallOver {
				res.Body = &cutter{ReadCloser: res.Body, left: *stallOver, stall: res.Request.Context()}
			}
			return nil
		},
		FlushInterval: -1, // every write passed on at once: nothing held back
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	srv := &http.Server{Addr: *listen, Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "liar:", err)
		os.Exit(1)
	}
}

// parseConfig parses the words of the file at path as flags.
func parseConfig(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var words []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			words = append(words, strings.Fields(line)...)
		}
	}
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	flag.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, f.Name, f.Usage) })
	if err := fs.Parse(words); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: %q is not a flag", path, fs.Arg(0))
	}
	return nil
}

// cutter passes the first left bytes of a body on, then fails its read, which makes the proxy
// abort the answer and break the connection: the client has a Content-Length the body never
// reaches. With stall set, the read waits for stall's end (the client gone) instead.
type cutter struct {
	io.ReadCloser
	left  int64
	stall context.Context
}

var errCut = errors.New("liar: body cut short")

func (c *cutter) Read(p []byte) (int, error) {
	if c.left <= 0 {
		if c.stall != nil {
			<-c.stall.Done()
		}
		return 0, errCut
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	return n, err
}

// rewriter passes a body on with the byte at offset at changed into another.
type rewriter struct {
	io.ReadCloser
	at, off int64
}

func (r *rewriter) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if i := r.at - r.off; i >= 0 && i < int64(n) {
		p[i] ^= 0x01 // another byte, whatever it was
	}
	r.off += int64(n)
	return n, err
}

// Command liar is a throwaway target of e2e/lies_test.go: a reverse proxy that flatters. It
// forwards every request to the upstream's cleartext port over HTTP/1.1 keep-alive, as every
// proxy of proxies/ does, and answers on the target's cleartext port only (h1c), but with
// -rewrite-at N it changes one byte of every body of / at offset N into another: the same
// length, Content-Length kept, so that only a client comparing the bytes can tell.
//
// -config FILE reads more flags from FILE (the target's rendered config template): its words,
// one or more a line, as on the command line; lines starting with # are comments.
package main

import (
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
	rewriteAt := flag.Int("rewrite-at", -1, "replace the byte at this offset of every body of / with another (-1: none)")
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
			if *rewriteAt >= 0 && res.Request.URL.Path == "/" {
				res.Body = &rewriter{ReadCloser: res.Body, at: int64(*rewriteAt)}
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

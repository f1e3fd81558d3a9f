package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/proxybench/proxybench/extensions/upstream"
)

// shutdownGrace bounds how long a stop waits for in-flight requests (a slow
// /sse, an /upload) before their connections are closed.
const shutdownGrace = 5 * time.Second

type config struct {
	h1c         string
	tls         string
	h3          string // UDP address of the HTTP/3 listener; empty: none
	cert        string
	key         string
	uploadLimit int64
	// TLS of the -tls and -h3 listeners (the direct target's TLS profile, from the stack)
	tlsMinVersion string // "1.2" or "1.3"
	tlsGroup      string // the one key exchange offered; empty: Go's defaults
	tlsTickets    bool   // session tickets, hence resumption (Go's server has no session cache)
	udpRcvBuf     int    // SO_RCVBUF of the -h3 socket, bytes; 0: quic-go's own (it raises it towards 7 MiB)
}

// tlsGroups are the -tls-group names: OpenSSL's and BoringSSL's, as in targets.json.
var tlsGroups = map[string]tls.CurveID{
	"X25519":         tls.X25519,
	"X25519MLKEM768": tls.X25519MLKEM768,
	"P-256":          tls.CurveP256,
	"P-384":          tls.CurveP384,
}

var tlsVersions = map[string]uint16{"1.2": tls.VersionTLS12, "1.3": tls.VersionTLS13}

// h3Off is the -h3 value that turns the HTTP/3 listener off.
const h3Off = "off"

func main() {
	os.Exit(realMain(os.Args[1:], os.Stderr))
}

// realMain returns the exit code: 0 after a clean stop, 1 when serving fails,
// 2 for bad flags.
func realMain(args []string, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "upstream: %v (see upstream -h)\n", err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	logger := log.New(stderr, "upstream: ", log.LstdFlags)
	if err := run(ctx, cfg, logger); err != nil {
		logger.Print(err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("upstream", flag.ContinueOnError)
	// Parse errors are reported once, by realMain, in the same shape as ours.
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.h1c, "h1c", "127.0.0.1:9000", "cleartext HTTP/1.1 (keep-alive) listen `address`")
	fs.StringVar(&c.tls, "tls", "", "TLS listen `address`, HTTP/2 and HTTP/1.1 by ALPN (the direct target); empty: no TLS listener")
	fs.StringVar(&c.h3, "h3", "", "HTTP/3 (QUIC) UDP listen `address`; default: the -tls address (same port, over UDP) when -tls is set; \""+h3Off+"\": none")
	fs.StringVar(&c.cert, "cert", "", "PEM certificate chain `file` for -tls (leaf first)")
	fs.StringVar(&c.key, "key", "", "PEM private key `file` for -tls")
	fs.Int64Var(&c.uploadLimit, "upload-limit", upstream.DefaultUploadLimit, "largest /upload body, in `bytes`")
	fs.StringVar(&c.tlsMinVersion, "tls-min-version", "1.2", "lowest TLS `version` of -tls: 1.2 or 1.3 (-h3 is always 1.3)")
	fs.StringVar(&c.tlsGroup, "tls-group", "", "the one key exchange `group` of -tls and -h3: "+strings.Join(slices.Sorted(maps.Keys(tlsGroups)), ", ")+"; empty: Go's defaults. (Go's server picks the TLS 1.3 cipher itself: AES-128-GCM on AES hardware)")
	fs.BoolVar(&c.tlsTickets, "tls-tickets", true, "issue TLS session tickets on -tls and -h3; false: no resumption, every connection a full handshake")
	fs.IntVar(&c.udpRcvBuf, "udp-rcvbuf", 0, "SO_RCVBUF of the -h3 socket in `bytes` (capped by net.core.rmem_max); 0: quic-go's own")

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "usage: upstream [flags]")
			fs.PrintDefaults()
		}
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q: every setting is a flag", fs.Arg(0))
	}
	// HTTP/3 comes with TLS by default, on the same port over UDP, as a proxy
	// serves it: the direct target must speak every protocol the proxies do.
	switch c.h3 {
	case "":
		c.h3 = c.tls
	case h3Off:
		c.h3 = ""
	}
	return c, c.validate()
}

func (c config) validate() error {
	if err := checkAddr("h1c", c.h1c); err != nil {
		return err
	}
	if c.tls == "" {
		if c.cert != "" || c.key != "" {
			return errors.New("-cert and -key need -tls: give -tls an address or drop them")
		}
		if c.h3 != "" {
			return errors.New("-h3 needs -tls (and its -cert and -key): QUIC is TLS 1.3")
		}
	} else {
		if err := checkAddr("tls", c.tls); err != nil {
			return err
		}
		if c.cert == "" {
			return errors.New("-cert is required when -tls is set")
		}
		if c.key == "" {
			return errors.New("-key is required when -tls is set")
		}
		if c.h3 != "" {
			if err := checkAddr("h3", c.h3); err != nil {
				return err
			}
		}
	}
	if _, ok := tlsVersions[c.tlsMinVersion]; !ok {
		return fmt.Errorf("-tls-min-version %q: want 1.2 or 1.3", c.tlsMinVersion)
	}
	if _, ok := tlsGroups[c.tlsGroup]; !ok && c.tlsGroup != "" {
		return fmt.Errorf("-tls-group %q: want one of %s", c.tlsGroup, strings.Join(slices.Sorted(maps.Keys(tlsGroups)), ", "))
	}
	if c.udpRcvBuf < 0 {
		return fmt.Errorf("-udp-rcvbuf must be 0 or a positive number of bytes, got %d", c.udpRcvBuf)
	}
	if c.uploadLimit <= 0 {
		return fmt.Errorf("-upload-limit must be a positive number of bytes, got %d", c.uploadLimit)
	}
	return nil
}

func checkAddr(flagName, addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("-%s %q: want host:port: %w", flagName, addr, err)
	}
	return nil
}

// run serves until ctx is done, then stops gracefully: listeners close at
// once, in-flight requests get shutdownGrace to finish.
func run(ctx context.Context, cfg config, logger *log.Logger) error {
	in, err := start(cfg, logger)
	if err != nil {
		return err
	}

	select {
	case <-ctx.Done():
		logger.Print("stopping: no new connections, finishing in-flight requests")
	case err := <-in.srv.Err():
		in.srv.Close()
		return err
	}

	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := in.srv.Shutdown(sctx); err != nil {
		logger.Printf("requests still in flight after %s, closing their connections", shutdownGrace)
		in.srv.Close()
	}
	logger.Print("stopped")
	return nil
}

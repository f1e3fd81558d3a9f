package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		want    config
		wantErr string // a substring; the flag at fault must be named
	}{
		{"defaults", nil, config{h1c: "127.0.0.1:9000", uploadLimit: 8388608, tlsMinVersion: "1.2", tlsTickets: true}, ""},
		{
			"all",
			[]string{"-h1c", "127.0.0.1:1", "-tls", "127.0.0.1:2", "-cert", "c.pem", "-key", "k.pem", "-upload-limit", "10"},
			config{h1c: "127.0.0.1:1", tls: "127.0.0.1:2", h3: "127.0.0.1:2", cert: "c.pem", key: "k.pem", uploadLimit: 10, tlsMinVersion: "1.2", tlsTickets: true},
			"",
		},
		{
			"h3 elsewhere",
			[]string{"-tls", "127.0.0.1:2", "-h3", "127.0.0.1:3", "-cert", "c", "-key", "k"},
			config{h1c: "127.0.0.1:9000", tls: "127.0.0.1:2", h3: "127.0.0.1:3", cert: "c", key: "k", uploadLimit: 8388608, tlsMinVersion: "1.2", tlsTickets: true},
			"",
		},
		{
			"h3 off",
			[]string{"-tls", "127.0.0.1:2", "-h3", "off", "-cert", "c", "-key", "k"},
			config{h1c: "127.0.0.1:9000", tls: "127.0.0.1:2", cert: "c", key: "k", uploadLimit: 8388608, tlsMinVersion: "1.2", tlsTickets: true},
			"",
		},
		{"h3 off without tls", []string{"-h3", "off"}, config{h1c: "127.0.0.1:9000", uploadLimit: 8388608, tlsMinVersion: "1.2", tlsTickets: true}, ""},
		{"h3 without tls", []string{"-h3", "127.0.0.1:3"}, config{}, "-h3 needs -tls"},
		{"bad h3", []string{"-tls", "127.0.0.1:2", "-h3", "8443", "-cert", "c", "-key", "k"}, config{}, `-h3 "8443": want host:port`},
		{"tls without cert", []string{"-tls", "127.0.0.1:8440", "-key", "k"}, config{}, "-cert is required when -tls is set"},
		{"tls without key", []string{"-tls", "127.0.0.1:8440", "-cert", "c"}, config{}, "-key is required when -tls is set"},
		{"cert without tls", []string{"-cert", "c", "-key", "k"}, config{}, "-cert and -key need -tls"},
		{"bad h1c", []string{"-h1c", "9000"}, config{}, `-h1c "9000": want host:port`},
		{"empty h1c", []string{"-h1c", ""}, config{}, `-h1c "": want host:port`},
		{"bad tls", []string{"-tls", "localhost", "-cert", "c", "-key", "k"}, config{}, `-tls "localhost": want host:port`},
		{"zero limit", []string{"-upload-limit", "0"}, config{}, "-upload-limit must be a positive number of bytes"},
		{"negative limit", []string{"-upload-limit", "-5"}, config{}, "-upload-limit must be a positive number of bytes"},
		{"malformed limit", []string{"-upload-limit", "8MB"}, config{}, `invalid value "8MB" for flag -upload-limit`},
		{"unknown flag", []string{"-h2c", "x"}, config{}, "flag provided but not defined: -h2c"},
		{"positional", []string{"serve"}, config{}, `unexpected argument "serve"`},
		{
			"tls profile",
			[]string{"-tls", "127.0.0.1:2", "-cert", "c", "-key", "k", "-tls-min-version", "1.3", "-tls-group", "X25519MLKEM768", "-tls-tickets=false", "-udp-rcvbuf", "4194304"},
			config{
				h1c: "127.0.0.1:9000", tls: "127.0.0.1:2", h3: "127.0.0.1:2", cert: "c", key: "k", uploadLimit: 8388608,
				tlsMinVersion: "1.3", tlsGroup: "X25519MLKEM768", udpRcvBuf: 4 << 20,
			},
			"",
		},
		{"unknown tls version", []string{"-tls-min-version", "1.1"}, config{}, `-tls-min-version "1.1": want 1.2 or 1.3`},
		{"unknown group", []string{"-tls-group", "x25519"}, config{}, `-tls-group "x25519": want one of P-256, P-384, X25519, X25519MLKEM768`},
		{"negative rcvbuf", []string{"-udp-rcvbuf", "-1"}, config{}, "-udp-rcvbuf must be 0 or a positive number of bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if got != tt.want {
				t.Errorf("config = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err = %v, want flag.ErrHelp", err)
	}
	for _, name := range []string{"-h1c", "-tls", "-h3", "-cert", "-key", "-upload-limit", "-tls-min-version", "-tls-group", "-tls-tickets", "-udp-rcvbuf"} {
		if !strings.Contains(out.String(), name) {
			t.Errorf("help does not mention %s:\n%s", name, out.String())
		}
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = held.Close() })
	busy := held.Addr().String()
	heldUDP, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = heldUDP.Close() })
	busyUDP := heldUDP.LocalAddr().String()
	tc := newTestCert(t)

	tests := []struct {
		name    string
		cfg     config
		wantErr []string
	}{
		{
			"h1c in use",
			config{h1c: busy, uploadLimit: 1},
			[]string{"-h1c " + busy + " is already in use", "make down"},
		},
		{
			"tls in use",
			config{h1c: "127.0.0.1:0", tls: busy, cert: tc.certFile, key: tc.keyFile, uploadLimit: 1},
			[]string{"-tls " + busy + " is already in use", "make down"},
		},
		{
			"h3 in use",
			config{h1c: "127.0.0.1:0", tls: "127.0.0.1:0", h3: busyUDP, cert: tc.certFile, key: tc.keyFile, uploadLimit: 1},
			[]string{"-h3 " + busyUDP + " (UDP) is already in use", "make down"},
		},
		{
			"missing cert",
			config{h1c: "127.0.0.1:0", tls: "127.0.0.1:0", cert: "/nonexistent/c.pem", key: tc.keyFile, uploadLimit: 1},
			[]string{"-cert /nonexistent/c.pem", "no such file"},
		},
		{
			"key is not a key",
			config{h1c: "127.0.0.1:0", tls: "127.0.0.1:0", cert: tc.certFile, key: tc.certFile, uploadLimit: 1},
			[]string{"-key " + tc.certFile},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in, err := start(tt.cfg, discardLogger())
			if err == nil {
				in.srv.Close()
				t.Fatal("start succeeded, want an error")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to contain %q", err, want)
				}
			}
		})
	}
}

// TestSignalStop runs the real main in a child process: it reports its
// addresses, serves, and on SIGTERM or SIGINT finishes the request in flight
// and exits 0.
func TestSignalStop(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			tc := newTestCert(t)
			cmd := exec.Command(os.Args[0], "-h1c", "127.0.0.1:0", "-tls", "127.0.0.1:0", "-cert", tc.certFile, "-key", tc.keyFile)
			cmd.Env = append(os.Environ(), upstreamMainEnv+"=1")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })

			lines := bufio.NewScanner(stderr)
			listening := regexp.MustCompile(`(h1c|tls|h3) listening on (\S+)`)
			addrs := map[string]string{}
			var log strings.Builder
			for len(addrs) < 3 && lines.Scan() {
				log.WriteString(lines.Text() + "\n")
				if m := listening.FindStringSubmatch(lines.Text()); m != nil {
					addrs[m[1]] = m[2]
				}
			}
			if len(addrs) < 3 {
				t.Fatalf("no listening lines on stderr:\n%s", log.String())
			}
			if addrs["h3"] != addrs["tls"] {
				t.Errorf("h3 listens on %s, want the TLS port (%s) over UDP", addrs["h3"], addrs["tls"])
			}

			// two 1-byte chunks 300 ms apart: the signal comes between them
			resp, err := http.Get("http://" + addrs["h1c"] + "/stream?chunks=2&chunk_bytes=1&interval_ms=300")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if _, err := io.ReadFull(resp.Body, make([]byte, 1)); err != nil {
				t.Fatalf("the first chunk: %v", err)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if rest, err := io.ReadAll(resp.Body); err != nil || len(rest) != 1 {
				t.Errorf("in-flight stream after %v: %q, %v; want its last chunk and a clean end", sig, rest, err)
			}

			for lines.Scan() {
				log.WriteString(lines.Text() + "\n")
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("exit after %v: %v, want 0\n%s", sig, err, log.String())
			}
			if !strings.Contains(log.String(), "stopped") {
				t.Errorf("no stop logged:\n%s", log.String())
			}
		})
	}
}

// TestExitCodes: bad flags exit 2 naming the flag, a busy port exits 1
// naming the address.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = held.Close() })
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad flag", []string{"-upload-limit", "x"}, 2, "-upload-limit"},
		{"tls without cert", []string{"-tls", "127.0.0.1:0"}, 2, "-cert"},
		{"h3 without tls", []string{"-h3", "127.0.0.1:0"}, 2, "-h3 needs -tls"},
		{"port in use", []string{"-h1c", held.Addr().String()}, 1, held.Addr().String() + " is already in use: stop whatever holds it or run `make down`"},
		{"help", []string{"-h"}, 0, "-upload-limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			if code := realMain(tt.args, &out); code != tt.code {
				t.Errorf("exit code = %d, want %d\n%s", code, tt.code, out.String())
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("stderr = %q, want it to contain %q", out.String(), tt.want)
			}
		})
	}
}

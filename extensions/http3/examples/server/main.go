// Command server is a small HTTP/3 server to try k6/x/proxybench/http3 with: quic-go on
// UDP, the proxybench upstream's routes (/, /healthz, /json, /upload, …: package upstream),
// a throwaway CA and a certificate for bench.test and 127.0.0.1. It writes the CA to -ca so
// that k6 can trust it:
//
//	go run ./http3/examples/server -addr 127.0.0.1:19950 -ca /tmp/h3-ca.pem
//	SSL_CERT_FILE=/tmp/h3-ca.pem K6_NO_USAGE_REPORT=true K6_AUTO_EXTENSION_RESOLUTION=false \
//	  ../bin/k6 run http3/examples/get.js
//
// It stops on SIGINT or SIGTERM.
package main

import (
	"flag"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/proxybench/proxybench/extensions/http3/internal/h3server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:19950", "UDP address to listen on")
	caPath := flag.String("ca", filepath.Join(os.TempDir(), "h3-example-ca.pem"), "where to write the CA certificate (PEM)")
	flag.Parse()

	ca, err := h3server.NewCA("bench.test", "127.0.0.1")
	if err != nil {
		log.Fatalf("making the certificates: %v", err)
	}
	if err := os.WriteFile(*caPath, ca.PEM, 0o600); err != nil {
		log.Fatalf("writing the CA: %v", err)
	}
	srv, err := h3server.Start(*addr, ca)
	if err != nil {
		log.Fatalf("listening on %s: %v", *addr, err)
	}
	log.Printf("HTTP/3 on udp %s for bench.test; trust it with SSL_CERT_FILE=%s", srv.Addr, *caPath)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
	log.Printf("%d QUIC connections accepted, %d closed cleanly by the client, %d otherwise",
		srv.Accepted(), srv.ClosedCleanly(), srv.ClosedOtherwise())
	_ = srv.Close()
}

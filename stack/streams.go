package stack

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/http2"
)

// UnlimitedStreams is what OfferedStreams returns for an HTTP/2 server that does not limit the
// concurrent streams of a connection (its SETTINGS carry no SETTINGS_MAX_CONCURRENT_STREAMS:
// RFC 9113 6.5.2, "initially, there is no limit"), or limits them to this or more. It is
// larger than any plan's streams per connection, so that "offered < planned" needs no special
// case.
const UnlimitedStreams = math.MaxInt32

// StreamsProbeCap bounds how many QUIC streams OfferedStreams opens to find an h3 limit: for a
// server that allows this many or more it returns StreamsProbeCap, read "at least".
const StreamsProbeCap = 10000

// streamsTimeout bounds one OfferedStreams: a handshake and one round trip on loopback.
const streamsTimeout = 5 * time.Second

// OfferedStreams is how many concurrent request streams one new connection to the target on
// port may carry, as the server announces it: for h2, SETTINGS_MAX_CONCURRENT_STREAMS of its
// first SETTINGS frame (UnlimitedStreams without one); for h3, its initial limit of
// bidirectional streams (initial_max_streams_bidi), at most StreamsProbeCap. A plan of S
// streams per connection runs S only where this is S or more. The connection is verified as
// Probe's are (our CA, SNI the benchmark hostname) and closed again without a request. h1 and
// h1c carry one request at a time: 1, nil.
func (p *Prober) OfferedStreams(ctx context.Context, proto Protocol, port int) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, streamsTimeout)
	defer cancel()
	target := net.JoinHostPort(p.addr, strconv.Itoa(port))
	var n int
	var err error
	switch proto {
	case H1, H1C:
		return 1, nil
	case H2:
		n, err = p.offeredH2(ctx, target)
	case H3:
		n, err = p.offeredH3(ctx, target)
	default:
		return 0, fmt.Errorf("offered streams: unknown protocol %q", proto)
	}
	if err != nil {
		return 0, fmt.Errorf("%s %s:%d: offered streams: %w", proto, p.host, port, err)
	}
	return n, nil
}

// offeredH2 reads the server's first SETTINGS frame after a client preface and empty SETTINGS.
func (p *Prober) offeredH2(ctx context.Context, target string) (int, error) {
	d := &tls.Dialer{Config: &tls.Config{ServerName: p.host, RootCAs: p.pool, NextProtos: []string{"h2"}}}
	c, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		return 0, fmt.Errorf("TLS dial %s: %w", target, err)
	}
	defer c.Close()
	if alpn := c.(*tls.Conn).ConnectionState().NegotiatedProtocol; alpn != "h2" {
		return 0, fmt.Errorf("TLS to %s negotiated ALPN %q, want h2", target, alpn)
	}
	// A server that accepts and then says nothing must not hold us past the context's end.
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()

	bw := bufio.NewWriter(c)
	fr := http2.NewFramer(bw, bufio.NewReader(c))
	if _, err := io.WriteString(bw, http2.ClientPreface); err != nil {
		return 0, fmt.Errorf("write client preface: %w", err)
	}
	if err := fr.WriteSettings(); err != nil {
		return 0, fmt.Errorf("write SETTINGS: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("write client preface: %w", err)
	}
	f, err := fr.ReadFrame()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return 0, fmt.Errorf("read the server's SETTINGS: %w", err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		return 0, fmt.Errorf("the server's first frame is %v, not SETTINGS (RFC 9113 3.4)", f.Header())
	}
	n := UnlimitedStreams
	if v, ok := sf.Value(http2.SettingMaxConcurrentStreams); ok && v < UnlimitedStreams {
		n = int(v)
	}
	// Politely: their settings acknowledged, and no request coming. Errors here change nothing
	// of what was read.
	_ = fr.WriteSettingsAck()
	_ = fr.WriteGoAway(0, http2.ErrCodeNo, nil)
	_ = bw.Flush()
	return n, nil
}

// offeredH3 opens bidirectional streams on a new QUIC connection until quic-go refuses one.
//
// quic-go does not expose the peer's transport parameters, but Conn.OpenStream (it never
// blocks) fails with StreamLimitReachedError once the peer's limit on our bidirectional
// streams is reached; a client applies the server's initial_max_streams_bidi when the
// handshake completes, which DialAddr waits for. The streams are never written to, so the
// server hears of none of them (QUIC opens a stream by its first frame) and raises no limit
// meanwhile. HTTP/3's own control and QPACK streams are unidirectional, under another limit:
// the bidirectional ones counted here are the requests'.
func (p *Prober) offeredH3(ctx context.Context, target string) (int, error) {
	tlsConf := &tls.Config{ServerName: p.host, RootCAs: p.pool, MinVersion: tls.VersionTLS13, NextProtos: []string{http3.NextProtoH3}}
	// As quicTransport's: a closed UDP port answers nothing, and is said well before 5 s.
	conn, err := quic.DialAddr(ctx, target, tlsConf, &quic.Config{HandshakeIdleTimeout: 2 * time.Second})
	if err != nil {
		return 0, fmt.Errorf("QUIC dial %s: %w", target, err)
	}
	// H3_NO_ERROR: the connection was ours to end, no request was lost.
	defer func() { _ = conn.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "") }()
	for n := range StreamsProbeCap {
		if _, err := conn.OpenStream(); err != nil {
			if isStreamLimit(err) {
				return n, nil
			}
			return 0, fmt.Errorf("QUIC OpenStream, stream %d: %w", n+1, err)
		}
	}
	return StreamsProbeCap, nil
}

// isStreamLimit tells quic-go's StreamLimitReachedError (v0.65 returns a pointer to it)
// from a connection's end.
func isStreamLimit(err error) bool {
	var ptr *quic.StreamLimitReachedError
	var val quic.StreamLimitReachedError
	return errors.As(err, &ptr) || errors.As(err, &val)
}

// StreamsWord says an OfferedStreams value: "250", "no limit", "at least 10000".
func StreamsWord(n int) string {
	switch {
	case n >= UnlimitedStreams:
		return "no limit"
	case n >= StreamsProbeCap:
		return "at least " + strconv.Itoa(StreamsProbeCap)
	}
	return strconv.Itoa(n)
}

// streamsProtocols are the protocols whose connections carry concurrent streams.
var streamsProtocols = []Protocol{H2, H3}

// streamsSummary is what each protocol offers, for the up line: "; h2: 128 streams per
// connection, h3: 100 streams per connection" ("" when nothing was read).
func streamsSummary(offered map[Protocol]int) string {
	var parts []string
	for _, p := range streamsProtocols {
		n, ok := offered[p]
		switch {
		case !ok:
		case n >= UnlimitedStreams:
			parts = append(parts, string(p)+": no limit on streams per connection")
		default:
			parts = append(parts, fmt.Sprintf("%s: %s streams per connection", p, StreamsWord(n)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", ")
}

// readStreams records in r.MaxStreams what each of the target's h2 and h3 offers. It is said,
// never fatal: a target that answered verified requests is up whatever this reads.
func (s *Stack) readStreams(ctx context.Context, name string, r *Running, prober *Prober) {
	for _, proto := range streamsProtocols {
		if !slices.Contains(r.Protocols, proto) {
			continue
		}
		n, err := prober.OfferedStreams(ctx, proto, proto.Port(r.Ports))
		if err != nil {
			// "warning:" first: the line is not one of the target's rows
			s.logf("warning: target %s: %v (its streams per connection are not recorded)", name, err)
			continue
		}
		if r.MaxStreams == nil {
			r.MaxStreams = map[Protocol]int{}
		}
		r.MaxStreams[proto] = n
	}
}

// OfferedStreams is what each up target's h2 and h3 offered when it started, by target
// (targets without a value read left out): see Prober.OfferedStreams for the values.
func (st *State) OfferedStreams() map[string]map[Protocol]int {
	out := map[string]map[Protocol]int{}
	for n, r := range st.Targets {
		if len(r.MaxStreams) > 0 {
			out[n] = r.MaxStreams
		}
	}
	return out
}

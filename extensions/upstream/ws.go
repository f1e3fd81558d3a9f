package upstream

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// wsWelcome is the text message sent right after the upgrade: its arrival
// times the handshake through the proxy, before any echo.
const wsWelcome = `{"hello":"bench"}`

// wsCloseWait is how long a client gets to answer the close frame sent at
// shutdown before its connection is dropped.
const wsCloseWait = 2 * time.Second

// wsReadLimit is the largest message a client may send (the sum of its
// frames), as DefaultUploadLimit is the largest upload: a frame or
// message declared or grown beyond it gets close 1009 (message too big) and
// the connection is dropped. Memory does not depend on it (messages are
// streamed through a 4 KiB buffer, never held whole); it bounds how long one
// message can keep the echo busy, and refuses a length no bench client sends.
const wsReadLimit = DefaultUploadLimit

// newUpgrader is the /ws upgrader; serveWS gives each upgrade its own Error
// hook, refuseWS.
func newUpgrader() websocket.Upgrader {
	return websocket.Upgrader{
		ReadBufferSize:  4096,
		WriteBufferSize: 4096,
		// Bench clients and proxies send whatever Origin they like, and there is
		// nothing here a cross-origin page could abuse.
		CheckOrigin: func(*http.Request) bool { return true },
	}
}

// refuseWS is the Error hook that answers an upgrade gorilla refuses (a plain
// GET, a bad key or version: 400; not a GET: 405) as its default does, and
// counts the answer in served: the upstream answered it, as it answers a 400
// on /stream.
func refuseWS(served *servedCell) func(http.ResponseWriter, *http.Request, int, error) {
	return func(w http.ResponseWriter, r *http.Request, status int, _ error) {
		w.Header().Set("Sec-Websocket-Version", "13")
		served.count(r, httpError(w, http.StatusText(status), status))
	}
}

// serveWS sends the welcome, then echoes every message with its own type
// (text as text, binary as binary) until the client closes. Messages are
// streamed through, not held, so memory does not grow with their size (up to
// wsReadLimit). A frame gorilla finds malformed (unmasked, a reserved opcode
// or bit, a control frame over 125 bytes) gets close 1002 and ends the
// connection, as does a client that goes away mid-frame.
//
// A session counts as one /ws request once the upgrade succeeded, before the
// welcome is sent; its bytes are the payloads sent (the welcome and every
// echo, not the frame headers), counted as each message is sent. Refused
// upgrades are counted as answers, by refuseWS.
func (h *Handler) serveWS(w http.ResponseWriter, r *http.Request, served *servedCell) {
	up := h.upgrader
	up.Error = refuseWS(served)
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	h.ws.add(c)
	defer h.ws.remove(c)
	defer c.Close()
	c.SetReadLimit(wsReadLimit)
	served.requests.Add(1)

	if err := wsSend(c, websocket.TextMessage, strings.NewReader(wsWelcome), &served.bytes); err != nil {
		return
	}
	for {
		kind, rd, err := c.NextReader()
		if err != nil {
			return // a close frame included: gorilla has answered it
		}
		if err := wsSend(c, kind, rd, &served.bytes); err != nil {
			return
		}
	}
}

// wsSend sends what src holds as one message of kind, streamed through
// gorilla's write buffer, and adds its payload bytes to sent before the
// message's last frame goes out: a client that has the whole message finds
// it counted.
func wsSend(c *websocket.Conn, kind int, src io.Reader, sent *atomic.Int64) error {
	wr, err := c.NextWriter(kind)
	if err != nil {
		return err
	}
	n, err := io.Copy(wr, src)
	sent.Add(n)
	if err != nil {
		return err
	}
	return wr.Close()
}

// wsRegistry tracks open WebSockets: http.Server.Shutdown does not know
// hijacked connections, so a stop would otherwise cut them without a word.
type wsRegistry struct {
	mu    sync.Mutex
	conns map[*websocket.Conn]struct{}
}

func (reg *wsRegistry) add(c *websocket.Conn) {
	reg.mu.Lock()
	reg.conns[c] = struct{}{}
	reg.mu.Unlock()
}

func (reg *wsRegistry) remove(c *websocket.Conn) {
	reg.mu.Lock()
	delete(reg.conns, c)
	reg.mu.Unlock()
}

// goingAway sends close 1001 to every WebSocket; the echo loop ends when the
// client answers, or after wsCloseWait.
func (reg *wsRegistry) goingAway() {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	msg := websocket.FormatCloseMessage(websocket.CloseGoingAway, "server shutting down")
	deadline := time.Now().Add(wsCloseWait)
	for c := range reg.conns {
		// WriteControl and the net.Conn deadline are safe alongside the echo
		// loop's reads and writes.
		_ = c.WriteControl(websocket.CloseMessage, msg, deadline)
		_ = c.NetConn().SetReadDeadline(deadline)
	}
}

func (reg *wsRegistry) closeAll() {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	for c := range reg.conns {
		_ = c.NetConn().Close()
	}
}

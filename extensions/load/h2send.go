package load

import (
	"golang.org/x/net/http2"
)

// HTTP/2's defaults until the server's SETTINGS say otherwise (RFC 9113 6.5.2).
const (
	h2DefaultWindow   = 65535
	h2DefaultMaxFrame = 16384
)

// sending is a connection's flow control of the request bodies it sends (run()'s uploads): the
// server's windows, which every DATA frame must fit (RFC 9113 6.9), and its largest frame.
type sending struct {
	window        int64 // the connection's send window
	initialWindow int64 // SETTINGS_INITIAL_WINDOW_SIZE: each new stream's send window
	maxFrame      int   // SETTINGS_MAX_FRAME_SIZE
}

func newSending() sending {
	return sending{window: h2DefaultWindow, initialWindow: h2DefaultWindow, maxFrame: h2DefaultMaxFrame}
}

// upload is what a stream has still to send of its request body.
type upload struct {
	left   int   // bytes not sent yet
	sent   int   // bytes sent (the body's offset of the next)
	window int64 // the stream's send window
}

func (h *h2Conn) newUpload(n int) upload {
	return upload{left: n, window: h.initialWindow}
}

// sendSettings applies the server's settings to the bodies being sent: a new initial window
// moves every open stream's window by the difference (RFC 9113 6.9.2).
func (h *h2Conn) sendSettings(sf *http2.SettingsFrame) {
	if v, ok := sf.Value(http2.SettingInitialWindowSize); ok {
		delta := int64(v) - h.initialWindow
		h.initialWindow = int64(v)
		for _, s := range h.streams {
			s.window += delta
		}
	}
	if v, ok := sf.Value(http2.SettingMaxFrameSize); ok {
		h.maxFrame = int(v)
	}
}

// windowUpdate widens the connection's send window, or a stream's.
func (h *h2Conn) windowUpdate(f *http2.WindowUpdateFrame) {
	if f.StreamID == 0 {
		h.window += int64(f.Increment)
		return
	}
	if s := h.streams[f.StreamID]; s != nil {
		s.window += int64(f.Increment)
	}
}

// send writes as much of every stream's request body as the windows allow now, each DATA frame
// cut from body's run of repeats at the stream's offset, the last one ending the stream. The
// loop calls it after every frame it handles: a WINDOW_UPDATE lets more go.
func (h *h2Conn) send(body content) {
	for id, s := range h.streams {
		for s.left > 0 && s.o.end.IsZero() && h.window > 0 && s.window > 0 {
			piece := body.from(s.sent)
			k := min(s.left, len(piece), h.maxFrame, int(min(h.window, s.window)))
			s.left -= k
			s.sent += k
			s.window -= int64(k)
			h.window -= int64(k)
			_ = h.fr.WriteData(id, s.left == 0, piece[:k])
		}
	}
}

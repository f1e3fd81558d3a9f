package upstream

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
)

// MaxBytes is the largest body /bytes serves: the body-size sweep's largest (8 MiB), and the
// upstream's default upload limit, so that the sweep uploads what it downloads.
const MaxBytes = 8 << 20

var bytesParams = [...]intParam{
	{name: "size", def: RootBodySize, min: 0, max: MaxBytes},
}

// servedPattern is the pattern every Handler's /bytes bodies and /stream chunks are prefixes of,
// built once and only read: every test server shares it instead of building 8 MiB of its own.
var servedPattern = sync.OnceValue(func() []byte { return Pattern(max(MaxBytes, streamParams[1].max)) })

var allowBytes = []string{"GET, HEAD"}

// serveBytes answers GET /bytes?size=N with the first N bytes of the pattern (Pattern(N), as /
// is Pattern(RootBodySize)), Content-Length set: a body of any size up to MaxBytes that a client
// can check byte for byte. The bytes are a prefix of the one pattern the handler built at start,
// written in one Write: nothing per request grows with N. It returns the body bytes written.
func (h *Handler) serveBytes(w http.ResponseWriter, r *http.Request) int64 {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header()["Allow"] = allowBytes
		return httpError(w, fmt.Sprintf("/bytes accepts GET and HEAD, not %s", clip(r.Method)), http.StatusMethodNotAllowed)
	}
	var v [len(bytesParams)]int
	if err := parseInts(r.URL.RawQuery, bytesParams[:], v[:]); err != nil {
		return httpError(w, err.Error(), http.StatusBadRequest)
	}
	hdr := w.Header()
	hdr["Content-Type"] = contentTypeOctets
	hdr["Content-Length"] = []string{strconv.Itoa(v[0])}
	n, _ := w.Write(h.pattern[:v[0]])
	return int64(n)
}

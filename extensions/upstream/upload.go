package upstream

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

var (
	allowUpload     = []string{"POST, PUT"}
	connectionClose = []string{"close"}
)

// serveUpload drains the body, counting it, and replies {"bytes":N}. The
// body goes to io.Discard: holding it would make the upstream's memory, not
// the proxy, the thing an upload benchmark measures. It returns the answer's
// body bytes written.
func (h *Handler) serveUpload(w http.ResponseWriter, r *http.Request) int64 {
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		w.Header()["Allow"] = allowUpload
		return httpError(w, fmt.Sprintf("/upload accepts POST and PUT, not %s", clip(r.Method)), http.StatusMethodNotAllowed)
	}
	// A declared length over the limit is refused before reading a byte;
	// a chunked body is counted as it comes, by MaxBytesReader.
	if r.ContentLength > h.uploadLimit {
		return h.tooLarge(w, r)
	}
	n, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, h.uploadLimit))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return h.tooLarge(w, r)
		}
		return httpError(w, fmt.Sprintf("reading the upload after %d bytes: %v", n, err), http.StatusBadRequest)
	}

	b := make([]byte, 0, 32)
	b = append(b, `{"bytes":`...)
	b = strconv.AppendInt(b, n, 10)
	b = append(b, '}')
	hdr := w.Header()
	hdr["Content-Type"] = contentTypeJSON
	hdr["Content-Length"] = []string{strconv.Itoa(len(b))}
	written, _ := w.Write(b)
	return int64(written)
}

// tooLarge answers 413 and, on HTTP/1.1, closes the connection without
// reading any more of the body. It returns the body bytes written.
func (h *Handler) tooLarge(w http.ResponseWriter, r *http.Request) int64 {
	if r.ProtoMajor == 1 {
		// Without it net/http reads the body it was told to refuse
		// before answering: closing the connection is the way to answer
		// at once. (On HTTP/2 it would GOAWAY every other stream.)
		w.Header()["Connection"] = connectionClose
		// Even so, once the handler returns, net/http reads up to 256 KiB
		// more of the body, with no deadline (the server has no
		// ReadTimeout): a client that stops sending after its chunked or
		// declared-too-long body is refused would hold the connection for
		// ever. A deadline already past ends that read, and the connection
		// closes once the 413 is out.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
	return httpError(w, fmt.Sprintf("upload larger than the limit of %d bytes (-upload-limit)", h.uploadLimit), http.StatusRequestEntityTooLarge)
}

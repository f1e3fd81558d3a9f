package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

var (
	allowUpload     = []string{"POST, PUT"}
	connectionClose = []string{"close"}
)

// serveUpload drains the body, counting it, and replies {"bytes":N}. The
// body goes to io.Discard: holding it would make the upstream's memory, not
// the proxy, the thing an upload benchmark measures.
func (s *server) serveUpload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		w.Header()["Allow"] = allowUpload
		http.Error(w, fmt.Sprintf("/upload accepts POST and PUT, not %s", r.Method), http.StatusMethodNotAllowed)
		return
	}
	// A declared length over the limit is refused before reading a byte;
	// a chunked body is counted as it comes, by MaxBytesReader.
	if r.ContentLength > s.uploadLimit {
		if r.ProtoMajor == 1 {
			// Without it net/http reads the body it was told to refuse
			// before answering: closing the connection is the way to answer
			// at once. (On HTTP/2 it would GOAWAY every other stream.)
			w.Header()["Connection"] = connectionClose
		}
		s.tooLarge(w)
		return
	}
	n, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, s.uploadLimit))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			s.tooLarge(w)
			return
		}
		http.Error(w, fmt.Sprintf("reading the upload after %d bytes: %v", n, err), http.StatusBadRequest)
		return
	}

	b := make([]byte, 0, 32)
	b = append(b, `{"bytes":`...)
	b = strconv.AppendInt(b, n, 10)
	b = append(b, '}')
	h := w.Header()
	h["Content-Type"] = contentTypeJSON
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	_, _ = w.Write(b)
}

func (s *server) tooLarge(w http.ResponseWriter) {
	http.Error(w, fmt.Sprintf("upload larger than the limit of %d bytes (-upload-limit)", s.uploadLimit), http.StatusRequestEntityTooLarge)
}

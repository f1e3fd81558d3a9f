package upstream

import (
	"net/http"
	"strconv"
)

// RootBodySize is the size of the / body, Pattern(RootBodySize).
const RootBodySize = 4096

// jsonDoc is the /json body: small, static, shaped like an API answer.
const jsonDoc = `{"service":"proxybench-upstream","version":1,"ok":true,` +
	`"items":[{"id":1,"name":"alpha","tags":["proxy","bench"],"score":0.98},` +
	`{"id":2,"name":"beta","tags":["stream","sse"],"score":0.92},` +
	`{"id":3,"name":"gamma","tags":["upload","ws"],"score":0.89}],` +
	`"meta":{"region":"loopback","cache":false}}`

// patternAlphabet makes bodies printable (readable in a capture) and
// deterministic (a client can check every byte, not only the length).
const patternAlphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// Pattern returns n bytes of patternAlphabet repeated: the / body is
// Pattern(RootBodySize) and every /stream chunk of n bytes is Pattern(n), a
// prefix of it. A fresh slice each call: the caller may change it.
func Pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = patternAlphabet[i%len(patternAlphabet)]
	}
	return b
}

// staticResponse is a complete answer built once at start.
type staticResponse struct {
	status        int
	contentType   []string
	contentLength []string
	body          []byte
}

func newStatic(status int, contentType []string, body []byte) staticResponse {
	return staticResponse{
		status:        status,
		contentType:   contentType,
		contentLength: []string{strconv.Itoa(len(body))},
		body:          body,
	}
}

var (
	rootResponse     = newStatic(http.StatusOK, contentTypeOctets, Pattern(RootBodySize))
	jsonResponse     = newStatic(http.StatusOK, contentTypeJSON, []byte(jsonDoc))
	healthzResponse  = newStatic(http.StatusOK, contentTypeText, []byte("ok"))
	notFoundResponse = newStatic(http.StatusNotFound, contentTypeText, []byte("404 page not found\n"))
)

// serve writes the answer and returns the body bytes written.
func (sr *staticResponse) serve(w http.ResponseWriter) int64 {
	h := w.Header()
	h["Content-Type"] = sr.contentType
	h["Content-Length"] = sr.contentLength
	if sr.status != http.StatusOK {
		w.WriteHeader(sr.status)
	}
	n, _ := w.Write(sr.body)
	return int64(n)
}

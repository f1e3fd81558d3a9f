package sse

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParserEvents(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name   string
		stream string
		want   []Event
	}{
		{
			name:   "typed event with id",
			stream: "event: tick\ndata: {\"seq\":1}\nid: 1\n\n",
			want:   []Event{{Type: "tick", Data: `{"seq":1}`, ID: "1"}},
		},
		{
			name:   "default type is message",
			stream: "data: hello\n\n",
			want:   []Event{{Type: "message", Data: "hello"}},
		},
		{
			name:   "data lines are joined with LF",
			stream: "data: a\ndata:b\ndata:  c\n\n",
			want:   []Event{{Type: "message", Data: "a\nb\n c"}},
		},
		{
			name:   "comments and unknown fields are ignored",
			stream: ": keep-alive\nretry: 1000\nfoo: bar\ndata: x\n\n",
			want:   []Event{{Type: "message", Data: "x"}},
		},
		{
			name:   "CRLF line endings",
			stream: "event: a\r\ndata: 1\r\n\r\nevent: b\r\ndata: 2\r\n\r\n",
			want:   []Event{{Type: "a", Data: "1"}, {Type: "b", Data: "2"}},
		},
		{
			name:   "CR line endings",
			stream: "data: 1\r\rdata: 2\r\r",
			want:   []Event{{Type: "message", Data: "1"}, {Type: "message", Data: "2"}},
		},
		{
			name:   "BOM at the start is skipped",
			stream: "\xEF\xBB\xBFdata: x\n\n",
			want:   []Event{{Type: "message", Data: "x"}},
		},
		{
			name:   "id persists and type resets",
			stream: "event: a\nid: 7\ndata: 1\n\ndata: 2\n\nid\ndata: 3\n\n",
			want: []Event{
				{Type: "a", Data: "1", ID: "7"},
				{Type: "message", Data: "2", ID: "7"},
				{Type: "message", Data: "3", ID: ""},
			},
		},
		{
			name:   "id with NUL is ignored",
			stream: "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n",
			want:   []Event{{Type: "message", Data: "a", ID: "1"}, {Type: "message", Data: "b", ID: "1"}},
		},
		{
			name:   "field without colon has an empty value",
			stream: "data\n\n",
			want:   []Event{{Type: "message", Data: ""}},
		},
		{
			name:   "no data means no event",
			stream: "event: tick\n\n\n\n",
			want:   nil,
		},
		{
			name:   "unterminated event is discarded",
			stream: "data: 1\n\ndata: 2\n",
			want:   []Event{{Type: "message", Data: "1"}},
		},
	}

	// Every stream is fed whole, then byte by byte, then in 3-byte chunks: a
	// chunk boundary anywhere (inside CRLF, inside the BOM) changes nothing.
	splits := map[string]int{"whole": 0, "bytewise": 1, "by3": 3}
	for _, tc := range tests {
		for splitName, size := range splits {
			t.Run(tc.name+"/"+splitName, func(t *testing.T) {
				t.Parallel()
				got, err := feedAll(newParser(), tc.stream, size)
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
			})
		}
	}
}

func TestParserLimit(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name   string
		stream string
	}{
		{"one endless line", "data: " + strings.Repeat("x", maxEventBytes+1)},
		{"many data lines", strings.Repeat("data: "+strings.Repeat("x", 1023)+"\n", 1025)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := feedAll(newParser(), tc.stream, 4096)
			require.ErrorContains(t, err, "sse: event larger than")
		})
	}
}

func feedAll(p *parser, stream string, size int) ([]Event, error) {
	if size <= 0 {
		size = len(stream)
	}
	var all []Event
	for len(stream) > 0 {
		n := min(size, len(stream))
		events, err := p.feed([]byte(stream[:n]))
		all = append(all, events...)
		if err != nil {
			return all, err
		}
		stream = stream[n:]
	}
	return all, nil
}

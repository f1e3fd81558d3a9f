package sse

import (
	"bytes"
	"fmt"
)

// maxEventBytes bounds the memory one event may take while it is being
// assembled (its pending line plus its data buffer). A stream that never ends
// a line is an error rather than an unbounded allocation.
const maxEventBytes = 1 << 20

// utf8BOM is skipped when it starts the stream, as the specification requires.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Event is one dispatched Server-Sent Event.
type Event struct {
	// Type is the "event" field, "message" when the server did not set one.
	Type string
	// Data is the "data" fields joined with "\n".
	Data string
	// ID is the last event ID seen on the stream when this event was
	// dispatched (an "id" field persists across events).
	ID string
}

// parser is an incremental text/event-stream parser following the WHATWG
// "Interpreting an event stream" algorithm: lines end with CRLF, LF or CR; a
// blank line dispatches the event being assembled; lines starting with ':' are
// comments; an unterminated event at the end of the stream is discarded.
// It is fed the body as it arrives, in chunks split at arbitrary bytes.
type parser struct {
	line      []byte // the start of a line whose terminator has not arrived yet
	skipLF    bool   // the previous chunk ended with CR: a leading LF belongs to it
	firstLine bool   // the BOM check is still due

	data   []byte
	typ    string
	lastID string
}

func newParser() *parser {
	return &parser{firstLine: true}
}

// feed parses the next chunk of the stream and returns the events it completed.
func (p *parser) feed(chunk []byte) ([]Event, error) {
	var events []Event
	for len(chunk) > 0 {
		if p.skipLF {
			p.skipLF = false
			if chunk[0] == '\n' {
				chunk = chunk[1:]
				continue
			}
		}

		i := bytes.IndexAny(chunk, "\r\n")
		if i < 0 {
			if len(p.line)+len(chunk)+len(p.data) > maxEventBytes {
				return events, fmt.Errorf("sse: event larger than %d bytes", maxEventBytes)
			}
			p.line = append(p.line, chunk...)
			break
		}

		line := chunk[:i]
		if len(p.line) > 0 {
			p.line = append(p.line, line...)
			line = p.line
		}
		if chunk[i] == '\r' {
			switch {
			case i+1 == len(chunk):
				p.skipLF = true
			case chunk[i+1] == '\n':
				i++
			}
		}
		chunk = chunk[i+1:]

		if ev, ok := p.processLine(line); ok {
			events = append(events, ev)
		}
		p.line = p.line[:0]
		if len(p.data) > maxEventBytes {
			return events, fmt.Errorf("sse: event larger than %d bytes", maxEventBytes)
		}
	}
	return events, nil
}

// processLine applies one complete line; it reports an event when the line
// was the blank line that dispatches one.
func (p *parser) processLine(line []byte) (Event, bool) {
	if p.firstLine {
		p.firstLine = false
		line = bytes.TrimPrefix(line, utf8BOM)
	}

	if len(line) == 0 {
		return p.dispatch()
	}
	if line[0] == ':' {
		return Event{}, false // comment
	}

	field, value, found := bytes.Cut(line, []byte{':'})
	if found {
		value = bytes.TrimPrefix(value, []byte{' '})
	}

	switch string(field) {
	case "event":
		p.typ = string(value)
	case "data":
		p.data = append(p.data, value...)
		p.data = append(p.data, '\n')
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			p.lastID = string(value)
		}
	default:
		// "retry" and unknown fields do not affect what is measured.
	}
	return Event{}, false
}

func (p *parser) dispatch() (Event, bool) {
	defer func() {
		p.data = p.data[:0]
		p.typ = ""
	}()

	if len(p.data) == 0 {
		return Event{}, false
	}

	ev := Event{
		Type: p.typ,
		Data: string(p.data[:len(p.data)-1]), // drop the final "\n"
		ID:   p.lastID,
	}
	if ev.Type == "" {
		ev.Type = "message"
	}
	return ev, true
}

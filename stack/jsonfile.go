package stack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
)

// DecodeJSON decodes data, the content of the file at path, into v; with strict, a key v has
// no field for is an error, so that a typo never silently falls back to a default. Anything
// after the value is an error too. An error names the file and, where the decoder tells, the
// line and column as compilers do (path:12:5: invalid character …), so that an editor can jump
// to it.
func DecodeJSON(path string, data []byte, v any, strict bool) error {
	// json.Unmarshal first: it checks the whole file (a truncated one, content after the value)
	// with an offset, where the Decoder has neither (io.ErrUnexpectedEOF, no position).
	if err := json.Unmarshal(data, new(json.RawMessage)); err != nil {
		return JSONError(path, data, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return JSONError(path, data, err)
	}
	return nil
}

// JSONError is err, from decoding data (the content of the file at path), said with the file
// and the line:column it happened at when err tells (json.SyntaxError, json.UnmarshalTypeError,
// an unknown key), else with the file alone.
func JSONError(path string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		msg := syn.Error()
		if syn.Offset >= int64(len(data)) && strings.HasPrefix(msg, "unexpected end") {
			msg += " (the file is truncated or a bracket is missing)"
		}
		return fmt.Errorf("%s:%s: %s", path, lineCol(data, syn.Offset), msg)
	case errors.As(err, &typ):
		what := "the file"
		if typ.Field != "" {
			what = strconv.Quote(typ.Field)
		}
		return fmt.Errorf("%s:%s: %s is a JSON %s, want %s", path, lineCol(data, typ.Offset), what, typ.Value, jsonKind(typ.Type))
	}
	// DisallowUnknownFields says `json: unknown field "name"`, without a position: the key's
	// first place in the file is where it most likely is.
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if q, ok := strings.CutPrefix(msg, "unknown field "); ok {
		if name, uerr := strconv.Unquote(q); uerr == nil {
			if at := keyOffset(data, name); at >= 0 {
				return fmt.Errorf("%s:%s: %s", path, lineCol(data, int64(at)+1), msg)
			}
		}
	}
	return fmt.Errorf("%s: %s", path, msg)
}

// lineCol is "line:column" (from 1, the column in bytes as Go's tools count it) of the byte
// before offset: encoding/json's offsets count the bytes read, the one at fault included.
func lineCol(data []byte, offset int64) string {
	i := int(min(max(offset-1, 0), int64(len(data))))
	line := 1 + bytes.Count(data[:i], []byte("\n"))
	col := i - (bytes.LastIndexByte(data[:i], '\n') + 1) + 1
	return fmt.Sprintf("%d:%d", line, col)
}

// keyOffset is where "name" first appears as an object key in data, or -1.
func keyOffset(data []byte, name string) int {
	q, err := json.Marshal(name)
	if err != nil {
		return -1
	}
	for from := 0; ; {
		i := bytes.Index(data[from:], q)
		if i < 0 {
			return -1
		}
		at := from + i
		rest := bytes.TrimLeft(data[at+len(q):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			return at
		}
		from = at + len(q)
	}
}

// jsonKind says what JSON value a Go type takes.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}

// WriteJSON writes v, indented, to path whole or not at all (a new file renamed over it): a
// process killed while writing never leaves a truncated file a reader cannot read.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

package main

import (
	"fmt"
	"strings"
	"time"
)

// transfer is what the -w variables report of the last attempt.
type transfer struct {
	url           string
	status        int // 0 when no response came
	total, tfb    time.Duration
	remoteIP, err string
}

// writeOutVars are the variables k6-operator v1.6.0's starter asks for, and no more.
var writeOutVars = map[string]func(transfer) string{
	"http_code":          func(t transfer) string { return fmt.Sprintf("%03d", t.status) },
	"time_total":         func(t transfer) string { return seconds(t.total) },
	"time_starttransfer": func(t transfer) string { return seconds(t.tfb) },
	"url_effective":      func(t transfer) string { return t.url },
	"remote_ip":          func(t transfer) string { return t.remoteIP },
	"errormsg":           func(t transfer) string { return t.err },
}

// seconds is a duration as curl writes it: seconds with six decimals.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%d.%06d", d/time.Second, (d%time.Second)/time.Microsecond)
}

// writeOut expands a -w format as curl does: %{name}, %% for %, and \n, \r, \t; any other
// pair of a backslash or % and a character stays as it is. It also returns the variables it
// does not know, which podcurl refuses where curl would warn and write nothing for them.
func writeOut(format string, t transfer) (string, []string) {
	var b strings.Builder
	var unknown []string
	for i := 0; i < len(format); i++ {
		c := format[i]
		if (c != '%' && c != '\\') || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		next := format[i+1]
		end := strings.IndexByte(format[i:], '}')
		switch {
		case c == '%' && next == '{' && end > 0:
			name := format[i+2 : i+end]
			if v := writeOutVars[name]; v != nil {
				b.WriteString(v(t))
			} else {
				unknown = append(unknown, name)
			}
			i += end
		case c == '%' && next == '%':
			b.WriteByte('%')
			i++
		case c == '\\' && strings.IndexByte("nrt", next) >= 0:
			b.WriteByte(map[byte]byte{'n': '\n', 'r': '\r', 't': '\t'}[next])
			i++
		default:
			b.WriteByte(c)
			b.WriteByte(next)
			i++
		}
	}
	return b.String(), unknown
}

package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// options are the command line's: only the flags the k6-operator's starter gives curl.
type options struct {
	retry    int
	method   string
	header   http.Header
	data     []string
	silent   bool
	writeOut string
	url      *url.URL
}

// usageError is a command line podcurl does not take: curl exits 2 on an unknown option.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// parseArgs reads the command line as curl does: options and the URL in any order, each
// option's value in the next argument.
func parseArgs(args []string) (options, error) {
	o := options{header: http.Header{}}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			if o.url != nil {
				return o, usageError{fmt.Sprintf("a second URL %q: podcurl takes one", arg)}
			}
			u, err := url.Parse(arg)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return o, usageError{fmt.Sprintf("URL %q: want http://host[:port]/path", arg)}
			}
			o.url = u
			continue
		}
		if arg == "-s" {
			o.silent = true
			continue
		}
		if arg != "--retry" && arg != "-X" && arg != "-H" && arg != "-d" && arg != "-w" {
			return o, usageError{fmt.Sprintf("option %s: is unknown", arg)}
		}
		if i+1 == len(args) {
			return o, usageError{fmt.Sprintf("option %s: requires parameter", arg)}
		}
		i++
		val := args[i]
		switch arg {
		case "--retry":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return o, usageError{fmt.Sprintf("option --retry: %q is not a whole number", val)}
			}
			o.retry = n
		case "-X":
			o.method = val
		case "-H":
			name, value, ok := strings.Cut(val, ":")
			if !ok || name == "" || strings.ContainsAny(name, " \t") {
				return o, usageError{fmt.Sprintf("option -H: %q is not 'Name: value'", val)}
			}
			o.header.Add(name, strings.TrimSpace(value))
		case "-d":
			if strings.HasPrefix(val, "@") {
				return o, usageError{fmt.Sprintf("option -d: %q: podcurl reads no files", val)}
			}
			o.data = append(o.data, val)
		case "-w":
			if strings.HasPrefix(val, "@") {
				return o, usageError{fmt.Sprintf("option -w: %q: podcurl reads no files", val)}
			}
			if _, unknown := writeOut(val, transfer{}); unknown != nil {
				return o, usageError{fmt.Sprintf("option -w: variables %q are unknown to podcurl", unknown)}
			}
			o.writeOut = val
		}
	}
	if o.url == nil {
		return o, usageError{"no URL given"}
	}
	return o, nil
}

// request is what curl would send: -d makes it a form POST, -X and -H override.
func (o options) request() (*http.Request, error) {
	method, body := http.MethodGet, ""
	header := http.Header{"Accept": {"*/*"}, "User-Agent": {"podcurl"}}
	if o.data != nil {
		method, body = http.MethodPost, strings.Join(o.data, "&")
		header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if o.method != "" {
		method = o.method
	}
	req, err := http.NewRequest(method, o.url.String(), strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	for name, values := range o.header {
		header[name] = values
	}
	req.Header = header
	if body == "" {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	return req, nil
}

package main

import (
	"bytes"
	"net/http"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The starters' commands, as the k6-operator writes them for two runners (fmt.Sprintf of
// pkg/resources/containers/curl_start.go, curl_stop.go; strings.Join(parts, ";")) and gives
// them to `sh -c`.
const (
	startPayload = `{"data":{"attributes":{"paused":false},"id":"default","type":"status"}}`
	stopPayload  = `{"data":{"attributes":{"stopped":true},"id":"default","type":"status"}}`
	// v1.6.0: the -w format opens with a newline, not a backslash and an n
	v160Format = "\n" + `{"http_code":%{http_code},"time_total":%{time_total},"time_starttransfer":%{time_starttransfer},"url":"%{url_effective}","remote_ip":"%{remote_ip}","errormsg":"%{errormsg}"}`
	v160Start  = `curl --retry 3 -X PATCH -H 'Content-Type: application/json' http://10.96.0.11:6565/v1/status -d '` + startPayload + `' -s -w '` + v160Format + `';` +
		`curl --retry 3 -X PATCH -H 'Content-Type: application/json' http://10.96.0.12:6565/v1/status -d '` + startPayload + `' -s -w '` + v160Format + `'`
	v160Stop = `curl --retry 3 -X PATCH -H 'Content-Type: application/json' http://10.96.0.11:6565/v1/status -d '` + stopPayload + `' -s -w '` + v160Format + `'`
	// before -s and -w were added (v0.0.x to v1.x)
	olderStart = `curl --retry 3 -X PATCH -H 'Content-Type: application/json' http://10.96.0.11:6565/v1/status -d '` + startPayload + `';` +
		`curl --retry 3 -X PATCH -H 'Content-Type: application/json' http://10.96.0.12:6565/v1/status -d '` + startPayload + `'`
)

// shellSplit returns the argument lists of each curl that `sh -c command` runs.
func shellSplit(t *testing.T, command string) [][]string {
	t.Helper()
	out, err := exec.Command("sh", "-c", `curl() { printf '%s\0' "$@"; printf '\1'; }; `+command).Output()
	if err != nil {
		t.Fatalf("sh -c: %v", err)
	}
	var calls [][]string
	for _, call := range bytes.Split(bytes.TrimSuffix(out, []byte{1}), []byte{1}) {
		calls = append(calls, strings.Split(strings.TrimSuffix(string(call), "\x00"), "\x00"))
	}
	return calls
}

func TestParseArgsOperatorCommands(t *testing.T) {
	t.Parallel()
	done := transfer{url: "http://10.96.0.11:6565/v1/status", status: 200, total: 1500 * time.Microsecond, tfb: time.Millisecond, remoteIP: "10.96.0.11"}
	v160Out := "\n" + `{"http_code":200,"time_total":0.001500,"time_starttransfer":0.001000,"url":"http://10.96.0.11:6565/v1/status","remote_ip":"10.96.0.11","errormsg":""}`
	for _, tc := range []struct {
		name    string
		command string
		hosts   []string
		data    string
		silent  bool
		out     string // what -w writes of done
	}{
		{"v1.6.0 start", v160Start, []string{"10.96.0.11:6565", "10.96.0.12:6565"}, startPayload, true, v160Out},
		{"v1.6.0 stop", v160Stop, []string{"10.96.0.11:6565"}, stopPayload, true, v160Out},
		{"older start", olderStart, []string{"10.96.0.11:6565", "10.96.0.12:6565"}, startPayload, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls := shellSplit(t, tc.command)
			if len(calls) != len(tc.hosts) {
				t.Fatalf("%d curls, want %d", len(calls), len(tc.hosts))
			}
			for i, args := range calls {
				o, err := parseArgs(args)
				if err != nil {
					t.Fatalf("parseArgs(%q): %v", args, err)
				}
				if o.retry != 3 || o.method != "PATCH" || o.silent != tc.silent || o.url.Host != tc.hosts[i] || o.url.Path != "/v1/status" ||
					!reflect.DeepEqual(o.header, http.Header{"Content-Type": {"application/json"}}) || !reflect.DeepEqual(o.data, []string{tc.data}) {
					t.Errorf("parseArgs(%q) = %+v", args, o)
				}
				if got, _ := writeOut(o.writeOut, done); got != tc.out {
					t.Errorf("-w writes %q, want %q", got, tc.out)
				}
			}
		})
	}
}

func TestParseArgsRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-v", "http://a/"}, "option -v: is unknown"},
		{[]string{"-XPATCH", "http://a/"}, "option -XPATCH: is unknown"},
		{[]string{"--retry-connrefused", "http://a/"}, "option --retry-connrefused: is unknown"},
		{[]string{"-f", "http://a/"}, "option -f: is unknown"},
		{[]string{"http://a/", "--retry"}, "option --retry: requires parameter"},
		{[]string{"--retry", "x", "http://a/"}, `--retry: "x" is not a whole number`},
		{[]string{"-H", "no colon", "http://a/"}, "is not 'Name: value'"},
		{[]string{"-d", "@body.json", "http://a/"}, "reads no files"},
		{[]string{"-w", "%{size_download}", "http://a/"}, `variables ["size_download"] are unknown`},
		{[]string{"-w", "@format.txt", "http://a/"}, "reads no files"},
		{[]string{"http://a/", "http://b/"}, "a second URL"},
		{[]string{"ftp://a/"}, "want http://"},
		{[]string{"-s"}, "no URL"},
	} {
		if _, err := parseArgs(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseArgs(%q) = %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

func TestWriteOutEscapes(t *testing.T) {
	t.Parallel()
	got, unknown := writeOut(`a\nb\tc\\n 100%% %\n %{http_code}\q %{x`, transfer{status: 7})
	if want := "a\nb\tc\\\\n 100% %\\n 007\\q %{x"; got != want || unknown != nil {
		t.Errorf("writeOut = %q, want %q", got, want)
	}
}

package settings

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// dotEnvLineRE is one setting of .env as make reads it (-include .env): NAME=value, NAME ?= value
// or NAME := value, with an optional export before it.
var dotEnvLineRE = regexp.MustCompile(`^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*[?:]?=\s*(.*?)\s*$`)

// DotEnv reads the settings of a .env file, as the Makefile takes them: so that
// `bin/proxybench` run by hand sees what `make` would. name is the file's, for errors.
func DotEnv(r io.Reader, name string) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := dotEnvLineRE.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("%s:%d: %q is not NAME=value (a setting of `make help`)", name, n, line)
		}
		out[m[1]] = m[2]
	}
	return out, sc.Err()
}

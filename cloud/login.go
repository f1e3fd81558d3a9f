package cloud

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var stackIDRE = regexp.MustCompile(`^[1-9]\d*$`)

// CheckLogin checks that k6 has what k6 cloud v2 requires, a token and a stack, from getenv
// or from what `k6 cloud login` saved, and says how to give them otherwise: k6 would say it
// only after building and archiving the test.
func CheckLogin(getenv func(string) string) error {
	token, stack := getenv("K6_CLOUD_TOKEN"), getenv("K6_CLOUD_STACK_ID")
	path := configPath(getenv)
	if token == "" || stack == "" {
		saved, err := savedLogin(path)
		if err != nil {
			return err
		}
		token = cmp.Or(token, saved.Token)
		if stack == "" && saved.StackID > 0 {
			stack = fmt.Sprint(saved.StackID)
		}
	}
	var missing []string
	if token == "" {
		missing = append(missing, "token (K6_CLOUD_TOKEN)")
	}
	if stack == "" {
		missing = append(missing, "stack (K6_CLOUD_STACK_ID)")
	} else if !stackIDRE.MatchString(stack) {
		return fmt.Errorf("K6_CLOUD_STACK_ID=%q: want the stack's number (Grafana Cloud → Testing & synthetics → Performance → Settings)", stack)
	}
	if len(missing) > 0 {
		return fmt.Errorf("not logged in to k6 cloud: no %s in the environment or in %s; run `bin/k6 cloud login --token <token> --stack <stack URL or slug>` once, or set K6_CLOUD_TOKEN and K6_CLOUD_STACK_ID (a Grafana Cloud stack is required since k6 v2)", strings.Join(missing, " and no "), path)
	}
	return nil
}

// configPath is where k6 keeps its configuration, `k6 cloud login` included.
func configPath(getenv func(string) string) string {
	if p := getenv("K6_CONFIG"); p != "" {
		return p
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "k6", "config.json")
	}
	return filepath.Join(getenv("HOME"), ".config", "k6", "config.json")
}

type credentials struct {
	Token   string `json:"token"`
	StackID int64  `json:"stackID"`
}

// savedLogin reads collectors.cloud of k6's configuration file; none is no login.
func savedLogin(path string) (credentials, error) {
	var conf struct {
		Collectors struct {
			Cloud credentials `json:"cloud"`
		} `json:"collectors"`
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return credentials{}, nil
	}
	if err != nil {
		return credentials{}, fmt.Errorf("k6's configuration %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		return credentials{}, fmt.Errorf("k6's configuration %s is not k6's JSON: %w", path, err)
	}
	return conf.Collectors.Cloud, nil
}

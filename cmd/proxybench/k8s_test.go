package main

import (
	"strings"
	"testing"

	"github.com/proxybench/proxybench/k8s"
	"github.com/proxybench/proxybench/scenarios"
)

// k8sEnv clears what `make` exports and `make k8s` reads, then sets a valid set, so that each
// row of a table changes only what it tests.
func k8sEnv(t *testing.T) {
	t.Helper()
	badInputEnv(t)
	for k, v := range map[string]string{
		"SCENARIO": "reused-h2", "PARALLELISM": "2", "IMAGE": "registry.example/proxybench-k6:v1",
		"TARGET_URL": "https://proxy.example:8443", "INFLUXDB_URL": "", "CLIENT": "", "TESTID": "k8s-test",
		"GODEBUG": "", "RATE": "", "K6_CLOUD_PROJECT_ID": "", "SUMMARY_JSON": "", "SEGMENTS": "",
	} {
		t.Setenv(k, v)
	}
}

// Every bad input to `make k8s` is refused before k6 runs, by an error naming the variable.
func TestK8sBadInputNamesTheVariable(t *testing.T) {
	for _, tc := range []struct {
		name, key, value string
		want             string // in the error
	}{
		{"no scenario", "SCENARIO", "", "no SCENARIO"},
		{"unknown scenario", "SCENARIO", "reused-h4", `unknown SCENARIO "reused-h4"`},
		{"proto of a load scenario", "PROTO", "h1", "PROTO=h1: PROTO applies to the probes only"},
		{"no parallelism", "PARALLELISM", "", `PARALLELISM="": want a whole number of at least 1`},
		{"zero parallelism", "PARALLELISM", "0", `PARALLELISM="0": want a whole number of at least 1`},
		{"negative parallelism", "PARALLELISM", "-2", `PARALLELISM="-2"`},
		{"fractional parallelism", "PARALLELISM", "1.5", `PARALLELISM="1.5"`},
		{"parallelism beyond int32", "PARALLELISM", "2147483648", `PARALLELISM="2147483648"`},
		{"no image", "IMAGE", "", "no IMAGE"},
		{"image with a space", "IMAGE", "a b", `IMAGE="a b"`},
		{"no target url", "TARGET_URL", "", "no TARGET_URL: the runners run in a cluster, which cannot reach this machine's loopback stack"},
		{"loopback target url", "TARGET_URL", "https://127.0.0.1:8441", "is this machine's loopback stack"},
		{"the stack's hostname", "TARGET_URL", "https://bench.test:8441", "is this machine's loopback stack"},
		{"localhost", "TARGET_URL", "http://localhost:8081", "is this machine's loopback stack"},
		{"not a url", "TARGET_URL", "proxy.example:8443", `TARGET_URL="proxy.example:8443": want a base URL`},
		{"ftp", "TARGET_URL", "ftp://proxy.example", "TARGET_URL="},
		{"target name with a space", "TARGET", "my proxy", `TARGET="my proxy"`},
		{"influxdb not a url", "INFLUXDB_URL", "influx:8086", `INFLUXDB_URL="influx:8086"`},
		{"unknown profile", "PROFILE", "huge", `unknown PROFILE "huge"`},
		{"bad testid", "TESTID", "a b", `TESTID "a b"`},
		{"bad duration", "DURATION", "10", `DURATION="10"`},
		{"bad count", "CONNECTIONS", "0", `CONNECTIONS="0"`},
		{"bad client", "CLIENT", "curl", `CLIENT="curl"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k8sEnv(t)
			t.Setenv(tc.key, tc.value)
			_, err := parseK8sFlags(nil)
			if err == nil {
				t.Fatalf("%s=%q was accepted", tc.key, tc.value)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s=%q: error\n%v\ndoes not say %q", tc.key, tc.value, err, tc.want)
			}
		})
	}
	t.Run("valid", func(t *testing.T) {
		k8sEnv(t)
		f, err := parseK8sFlags(nil)
		if err != nil {
			t.Fatal(err)
		}
		if f.Parallelism != 2 || f.Target != "" {
			t.Errorf("parsed %+v", f)
		}
	})
	t.Run("TARGET=all is the Makefile's default, no name", func(t *testing.T) {
		k8sEnv(t)
		t.Setenv("TARGET", "all")
		if f, err := parseK8sFlags(nil); err != nil || f.Target != "" {
			t.Errorf("TARGET=all: %+v, %v", f, err)
		}
	})
}

// The flags and the environment reach the package's settings, each as given, trimmed.
func TestK8sFlagsAreTheSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want k8s.Settings
	}{
		{
			"from the environment",
			map[string]string{"SCENARIO": " json ", "PROTO": "h1c", "PARALLELISM": "1", "TARGET": "edge", "INFLUXDB_URL": "http://influxdb.monitoring:8086/k6", "PROFILE": "stable"},
			nil,
			k8s.Settings{
				Scenario: "json", Proto: "h1c", Profile: "stable", TestID: "k8s-test", Parallelism: 1, Image: "registry.example/proxybench-k6:v1",
				TargetURL: "https://proxy.example:8443", Target: "edge", InfluxURL: "http://influxdb.monitoring:8086/k6",
			},
		},
		{
			"flags over the environment",
			nil,
			[]string{"-scenario", "fresh-h1c", "-parallelism", "4", "-image", "r.example/k6:v2", "-target-url", "http://10.0.0.5:8081", "-testid", "t2", "-separate"},
			k8s.Settings{
				Scenario: "fresh-h1c", Profile: scenarios.DefaultProfile(), TestID: "t2", Parallelism: 4, Image: "r.example/k6:v2",
				TargetURL: "http://10.0.0.5:8081", Separate: true,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k8sEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			f, err := parseK8sFlags(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if f.Settings != tc.want {
				t.Errorf("settings\n%+v\nwant\n%+v", f.Settings, tc.want)
			}
		})
	}
}

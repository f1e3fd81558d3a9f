package main

import (
	"slices"
	"testing"

	"github.com/proxybench/proxybench/k8s"
)

// The runners get what the scripts and k6 read, not this machine's PATH or HOME, nor its K6_OUT
// (each runner writes its own histograms); a variable given twice keeps its last value.
func TestPodEnv(t *testing.T) {
	got := podEnv([]string{
		"PATH=/usr/bin", "HOME=/root", "PWD=/work", "K6_OUT=proxybench-influxdb=http://x", "K6_NO_USAGE_REPORT=true",
		"TARGET=nginx", "SSL_CERT_FILE=/srv/ca.pem", "TARGETS_FILE=/srv/t.json", "SEGMENTS=2", "DURATION=2s", "DURATION=3s",
	})
	want := []k8s.EnvVar{
		{Name: "K6_NO_USAGE_REPORT", Value: "true"},
		{Name: "TARGET", Value: "nginx"},
		{Name: "SSL_CERT_FILE", Value: "/srv/ca.pem"},
		{Name: "TARGETS_FILE", Value: "/srv/t.json"},
		{Name: "SEGMENTS", Value: "2"},
		{Name: "DURATION", Value: "3s"},
	}
	if !slices.EqualFunc(got, want, func(a, b k8s.EnvVar) bool { return a.Name == b.Name && a.Value == b.Value }) {
		t.Errorf("podEnv:\n got %+v\nwant %+v", got, want)
	}
}

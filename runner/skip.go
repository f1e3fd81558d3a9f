package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/proxybench/proxybench/internal/result"
	"github.com/proxybench/proxybench/stack"
)

// wire is the protocol a response over p arrives over, as k6 reports it.
var wire = map[string]string{"h1": "HTTP/1.1", "h1c": "HTTP/1.1", "h2": "HTTP/2.0", "h3": "HTTP/3.0"}

// Skip records a cell that is not run because its target does not serve the protocol the cell
// needs (Pingora and h2o 2.2 have no HTTP/3): a result with Skipped set, written beside
// the others so that the table, `proxybench table` and any report show the row as "no h3"
// instead of leaving the target out. serves are the target's protocols, for the reason.
func (r *Runner) Skip(testid string, j Job, serves []string) *result.Result {
	need := j.Requires()
	return r.skip(testid, j, "no "+need,
		fmt.Sprintf("%s does not serve %s (it serves %s)", j.Target, need, strings.Join(serves, ", ")))
}

// SkipMissing records a cell of a target that is not up, with why (the stack's state: "not
// installed: how to add it" for an optional target no registry serves, "install failed: …",
// "not verified: …"), so that every table says so under that label.
func (r *Runner) SkipMissing(testid string, j Job, why string) *result.Result {
	label := stack.Label(why)
	if label == "" {
		label = stack.LabelNotInstalled
	}
	return r.skip(testid, j, label, why)
}

func (r *Runner) skip(testid string, j Job, label, reason string) *result.Result {
	need := j.Requires()
	res := &result.Result{
		Schema: result.Schema, TestID: testid, Scenario: j.Scenario, Mode: j.Mode(), Target: j.Target, Proto: j.Proto,
		ExpectedProto: wire[need], Profile: r.Profile,
		ProtosSeen: map[string]float64{}, Extra: map[string]result.Stats{}, Invalid: []string{},
		Skipped:    label,
		SkipReason: reason, Body: j.Body,
	}
	if j.Proto == "" {
		res.Proto = need
	}
	dir := filepath.Join(r.ResultsDir, testid)
	data, err := json.MarshalIndent(res, "", "  ")
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, j.name()+".json"), append(data, '\n'), 0o644)
	}
	if err != nil {
		res.Err = fmt.Sprintf("recording the skipped cell: %v", err)
	}
	return res
}

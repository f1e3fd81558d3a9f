package k8s

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/proxybench/proxybench/runner"
)

// The TestRun API followed: grafana/k6-operator's api/v1alpha1 (testrun_types.go) and
// docs/crd-generated.md. testrun.schema.json names the same version.
const (
	operatorVersion = "v1.1.1"
	testRunAPI      = "k6.io/v1alpha1"
	// maxNameLen keeps the operator's derived names valid: it labels every pod k6_cr=<name> (a
	// label value: 63 at most) and names services <name>-service-<index>.
	maxNameLen = 40
)

// shellSafeRE is what a --tag argument may hold: the operator splits spec.arguments at spaces
// and its initializer runs them through `sh -c` (k6 archive … <arguments>).
var shellSafeRE = regexp.MustCompile(`^[A-Za-z0-9_.:,@%+/=-]+$`)

var notDNSRE = regexp.MustCompile(`[^a-z0-9]+`)

// objectName is the TestRun's and ConfigMap's name: a DNS label made of the cell and the
// testid, cut to maxNameLen with a hash of the whole so that two long testids stay apart.
func objectName(cell, testid string) string {
	full := "proxybench-" + cell + "-" + testid
	name := strings.Trim(notDNSRE.ReplaceAllString(strings.ToLower(full), "-"), "-")
	if len(name) <= maxNameLen && name == full {
		return name
	}
	sum := sha256.Sum256([]byte(full))
	h := hex.EncodeToString(sum[:])[:6]
	if len(name) > maxNameLen-7 {
		name = strings.TrimRight(name[:maxNameLen-7], "-")
	}
	return name + "-" + h
}

// runnerArgs is spec.arguments. The operator adds `--tag instance_id=<i> --tag testrun_name=…`
// to every runner's command, and a --tag given on k6's command line replaces the script's
// options.tags instead of adding to them (k6 v2.2): the scripts' test-wide tags (testid,
// target, mode) would be gone from every sample. So they are given again here, as flags.
func runnerArgs(tags map[string]string, influxURL string) (string, error) {
	var args []string
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		a := k + "=" + tags[k]
		if !shellSafeRE.MatchString(a) {
			return "", fmt.Errorf("the script's tag %s=%q cannot be passed on the operator's command line (its initializer runs it through sh -c): letters, digits and _.:,@%%+/=- only", k, tags[k])
		}
		args = append(args, "--tag", a)
	}
	if influxURL != "" {
		args = append(args, "--out", "proxybench-influxdb="+influxURL)
	}
	return strings.Join(args, " "), nil
}

// The TestRun, only the fields written. Field order is the YAML's order.
type (
	testRun struct {
		APIVersion string      `yaml:"apiVersion"`
		Kind       string      `yaml:"kind"`
		Metadata   objectMeta  `yaml:"metadata"`
		Spec       testRunSpec `yaml:"spec"`
	}
	testRunSpec struct {
		Parallelism int    `yaml:"parallelism"`
		Separate    bool   `yaml:"separate,omitempty"`
		Script      script `yaml:"script"`
		Arguments   string `yaml:"arguments,omitempty"`
		Runner      pod    `yaml:"runner"`
		Starter     *pod   `yaml:"starter,omitempty"`
		Cleanup     string `yaml:"cleanup,omitempty"` // "post" or none
	}
	script struct {
		ConfigMap struct {
			Name string `yaml:"name"`
			File string `yaml:"file"`
		} `yaml:"configMap"`
	}
	pod struct {
		Image           string        `yaml:"image"`
		ImagePullPolicy string        `yaml:"imagePullPolicy,omitempty"`
		Env             []EnvVar      `yaml:"env,omitempty"`
		Volumes         []volume      `yaml:"volumes,omitempty"`
		VolumeMounts    []volumeMount `yaml:"volumeMounts,omitempty"`
	}
	volume struct {
		Name     string `yaml:"name"`
		HostPath struct {
			Path string `yaml:"path"`
		} `yaml:"hostPath"`
	}
	volumeMount struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly,omitempty"`
	}
)

// manifests are the two objects of one `make k8s`.
type manifests struct {
	ConfigMap configMap
	TestRun   testRun
}

// inspected is what `k6 inspect --execution-requirements` says of the archive that we use.
type inspected struct {
	Tags   map[string]string `json:"tags"`
	MaxVUs int               `json:"maxVUs"`
}

// build makes the objects from the archive, what inspecting it said and the runners' env.
func build(s Settings, archive []byte, in inspected, env []EnvVar) (*manifests, error) {
	name := objectName(s.Cell(), s.TestID)
	meta := objectMeta{
		Name:   name,
		Labels: map[string]string{"app.kubernetes.io/part-of": "proxybench", "proxybench/scenario": s.Scenario},
		// annotations: a testid can be longer than a label value may be
		Annotations: map[string]string{"proxybench/testid": s.TestID},
	}
	if s.TargetURL != "" { // on our own node the runners take the target from TARGETS_FILE
		meta.Annotations["proxybench/target-url"] = s.TargetURL
	}
	cm, err := newConfigMap(meta, s.Scenario, archive)
	if err != nil {
		return nil, err
	}
	if in.MaxVUs > 0 && s.Parallelism > in.MaxVUs {
		more := " (more with CONNECTIONS or FRESH_CONNECTIONS)"
		if runner.IsProbe(s.Scenario) {
			more = ": a probe samples on one connection; on the operator it still runs from the cluster's machines"
		}
		return nil, fmt.Errorf("PARALLELISM=%d is more than the %d VU(s) %s runs at most: %d of the runners would have no VU and run setup() alone; give PARALLELISM=%d at most%s", s.Parallelism, in.MaxVUs, s.Cell(), s.Parallelism-in.MaxVUs, in.MaxVUs, more)
	}
	args, err := runnerArgs(in.Tags, s.InfluxURL)
	if err != nil {
		return nil, err
	}
	m := &manifests{ConfigMap: cm, TestRun: testRun{APIVersion: testRunAPI, Kind: "TestRun", Metadata: meta}}
	spec := &m.TestRun.Spec
	spec.Parallelism = s.Parallelism
	spec.Separate = s.Separate
	spec.Script.ConfigMap.Name, spec.Script.ConfigMap.File = name, archiveKey
	spec.Arguments = args
	spec.Runner.Image = s.Image
	spec.Runner.Env = slices.Concat(offlineEnv, env)
	if l := s.Local; l != nil {
		spec.Runner.Env = append(spec.Runner.Env, l.Env...)
		spec.Runner.ImagePullPolicy = "Never"
		for i, m := range l.Mounts {
			v := volume{Name: fmt.Sprintf("host-%d", i)}
			v.HostPath.Path = m.Path
			spec.Runner.Volumes = append(spec.Runner.Volumes, v)
			spec.Runner.VolumeMounts = append(spec.Runner.VolumeMounts, volumeMount{Name: v.Name, MountPath: m.Path, ReadOnly: !m.Writable})
		}
		spec.Starter = &pod{Image: l.StarterImage, ImagePullPolicy: "Never"}
	}
	if s.InfluxURL != "" {
		// once the test is over the operator deletes the TestRun and all it made (jobs, pods,
		// their logs); the ConfigMap is ours and stays. Without InfluxDB the runners' logs are
		// all that is kept of the run, so the pods stay until the TestRun is deleted.
		spec.Cleanup = "post"
	}
	return m, nil
}

package k8s

import (
	"encoding/base64"
	"fmt"
)

const (
	// archiveKey is the ConfigMap key, and so the file under /test/ the operator runs.
	archiveKey = "archive.tar"
	// configMapLimit is Kubernetes' limit on a ConfigMap's data, which the operator's docs repeat
	// for scripts: larger archives need a volumeClaim.
	configMapLimit = 1 << 20
)

// Kubernetes objects, only the fields written. Field order is the YAML's order.
type (
	objectMeta struct {
		Name        string            `yaml:"name"`
		Labels      map[string]string `yaml:"labels,omitempty"`
		Annotations map[string]string `yaml:"annotations,omitempty"`
	}
	configMap struct {
		APIVersion string     `yaml:"apiVersion"`
		Kind       string     `yaml:"kind"`
		Metadata   objectMeta `yaml:"metadata"`
		// BinaryData holds base64, as the API wants it: the YAML library would write a []byte
		// as a list of numbers
		BinaryData map[string]string `yaml:"binaryData"`
	}
)

// newConfigMap holds the archive under archiveKey, or says why a ConfigMap cannot.
func newConfigMap(meta objectMeta, scenario string, archive []byte) (configMap, error) {
	if len(archive) > configMapLimit {
		return configMap{}, fmt.Errorf("the k6 archive of %s is %d bytes, over a ConfigMap's %d: it would need a volumeClaim (k8s/README.md)", scenario, len(archive), configMapLimit)
	}
	return configMap{
		APIVersion: "v1", Kind: "ConfigMap", Metadata: meta,
		BinaryData: map[string]string{archiveKey: base64.StdEncoding.EncodeToString(archive)},
	}, nil
}

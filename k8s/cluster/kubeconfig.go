package cluster

import (
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// The kubeconfig, only the fields written (client-go's clientcmd/api/v1).
type (
	kubeconfig struct {
		APIVersion     string         `yaml:"apiVersion"`
		Kind           string         `yaml:"kind"`
		Clusters       []namedCluster `yaml:"clusters"`
		Users          []namedUser    `yaml:"users"`
		Contexts       []namedContext `yaml:"contexts"`
		CurrentContext string         `yaml:"current-context"`
	}
	namedCluster struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server               string `yaml:"server"`
			CertificateAuthority string `yaml:"certificate-authority"`
		} `yaml:"cluster"`
	}
	namedUser struct {
		Name string `yaml:"name"`
		User struct {
			ClientCertificate string `yaml:"client-certificate"`
			ClientKey         string `yaml:"client-key"`
		} `yaml:"user"`
	}
	namedContext struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster string `yaml:"cluster"`
			User    string `yaml:"user"`
		} `yaml:"context"`
	}
)

// contextName names the cluster, the user and the context in every kubeconfig written here.
const contextName = "proxybench"

// writeKubeconfig writes dir/name: server as the user of client, trusting ca. The paths are
// relative to dir, where the kubeconfig is: kubectl and client-go read them from there.
func writeKubeconfig(dir, name, server, ca string, client pair) error {
	kc := kubeconfig{
		APIVersion: "v1", Kind: "Config", CurrentContext: contextName,
		Clusters: make([]namedCluster, 1), Users: make([]namedUser, 1), Contexts: make([]namedContext, 1),
	}
	kc.Clusters[0].Name = contextName
	kc.Clusters[0].Cluster.Server, kc.Clusters[0].Cluster.CertificateAuthority = server, ca
	kc.Users[0].Name = contextName
	kc.Users[0].User.ClientCertificate, kc.Users[0].User.ClientKey = client.Cert, client.Key
	kc.Contexts[0].Name = contextName
	kc.Contexts[0].Context.Cluster, kc.Contexts[0].Context.User = contextName, contextName
	data, err := yaml.Marshal(kc)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	return nil
}

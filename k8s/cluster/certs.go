package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/proxybench/proxybench/extensions/localca"
)

// certsFor is how long the certificates live: a cluster is started afresh by every Up.
const certsFor = 30 * 24 * time.Hour

// serviceIP is the first address of the service range: the API server's own Service
// (kubernetes.default), which its serving certificate names as pods reach it.
const (
	serviceRange = "10.96.0.0/24"
	serviceIP    = "10.96.0.1"
)

// pki names the files of one cluster's certificates, under dir/pki. Every name is relative to
// dir, as the kubeconfigs refer to them (kubectl reads such paths from the kubeconfig's folder).
type pki struct {
	CA        string // the CA all trust
	APIServer pair   // the API server's serving certificate
	Etcd      pair   // etcd's serving certificate
	EtcdPeer  pair   // the API server as etcd's client
	SAKey     string // the key that signs service account tokens
	SAPub     string // its public half, which checks them
	// the clients of the API server: the user is the CommonName, the groups the Organization
	Admin, ControllerManager, Scheduler pair
	// a node's: the kubelet as the API server's client and as a server (logs, exec), kube-proxy,
	// and the API server as the kubelet's client
	Kubelet, KubeletServing, KubeProxy, APIServerKubelet pair
}

type pair struct{ Cert, Key string }

func pkiNames() pki {
	p := func(name string) pair {
		return pair{filepath.Join("pki", name+".crt"), filepath.Join("pki", name+".key")}
	}
	return pki{
		CA:        filepath.Join("pki", "ca.crt"),
		APIServer: p("apiserver"), Etcd: p("etcd"), EtcdPeer: p("apiserver-etcd-client"),
		SAKey: filepath.Join("pki", "sa.key"), SAPub: filepath.Join("pki", "sa.pub"),
		Admin: p("admin"), ControllerManager: p("controller-manager"), Scheduler: p("scheduler"),
		Kubelet: p("kubelet"), KubeletServing: p("kubelet-serving"), KubeProxy: p("kube-proxy"),
		APIServerKubelet: p("apiserver-kubelet-client"),
	}
}

// writeCerts makes a CA and every certificate the cluster needs under dir/pki.
func writeCerts(dir string) (pki, error) {
	names := pkiNames()
	if err := os.MkdirAll(filepath.Join(dir, "pki"), 0o700); err != nil {
		return names, fmt.Errorf("certificates: %w", err)
	}
	// the CA's own leaf is the API server's: every name a client inside or outside reaches it by
	a, err := localca.New("proxybench k8s CA", []string{
		"127.0.0.1", HostIP, "localhost", "kubernetes",
		"kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", serviceIP,
	}, certsFor, certsFor)
	if err != nil {
		return names, fmt.Errorf("certificates: %w", err)
	}
	caPEM, certPEM, keyPEM, err := a.PEM()
	if err != nil {
		return names, fmt.Errorf("certificates: %w", err)
	}
	files := map[string][]byte{names.CA: caPEM, names.APIServer.Cert: certPEM, names.APIServer.Key: keyPEM}
	serverAuth := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	clientAuth := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	for _, l := range []struct {
		p    pair
		leaf localca.Leaf
	}{
		{names.Etcd, localca.Leaf{Subject: pkix.Name{CommonName: "etcd"}, Hosts: []string{"127.0.0.1", "localhost"}, Usage: serverAuth}},
		{names.EtcdPeer, localca.Leaf{Subject: pkix.Name{CommonName: "kube-apiserver-etcd-client"}, Usage: clientAuth}},
		// system:masters: the group RBAC lets do everything, as kubeadm's admin.conf
		{names.Admin, localca.Leaf{Subject: pkix.Name{CommonName: "proxybench-admin", Organization: []string{"system:masters"}}, Usage: clientAuth}},
		// the users the API server's default RBAC roles are bound to
		{names.ControllerManager, localca.Leaf{Subject: pkix.Name{CommonName: "system:kube-controller-manager"}, Usage: clientAuth}},
		{names.Scheduler, localca.Leaf{Subject: pkix.Name{CommonName: "system:kube-scheduler"}, Usage: clientAuth}},
		// the Node authorizer knows a kubelet by this user and group
		{names.Kubelet, localca.Leaf{Subject: pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}}, Usage: clientAuth}},
		{names.KubeletServing, localca.Leaf{Subject: pkix.Name{CommonName: nodeName}, Hosts: []string{nodeIP}, Usage: serverAuth}},
		{names.KubeProxy, localca.Leaf{Subject: pkix.Name{CommonName: "system:kube-proxy"}, Usage: clientAuth}},
		{names.APIServerKubelet, localca.Leaf{Subject: pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}}, Usage: clientAuth}},
	} {
		l.leaf.For = certsFor
		issued, err := a.Issue(l.leaf)
		if err != nil {
			return names, fmt.Errorf("certificates: %w", err)
		}
		if files[l.p.Cert], files[l.p.Key], err = issued.PEM(); err != nil {
			return names, fmt.Errorf("certificates: %w", err)
		}
	}
	// service account tokens are ES256
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return names, fmt.Errorf("certificates: service account key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(saKey)
	if err != nil {
		return names, fmt.Errorf("certificates: service account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return names, fmt.Errorf("certificates: service account key: %w", err)
	}
	files[names.SAKey] = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	files[names.SAPub] = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return names, fmt.Errorf("certificates: %w", err)
		}
	}
	return names, nil
}

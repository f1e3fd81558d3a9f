package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestCerts: every certificate verifies against the one CA for what it is used for, servers
// for the names they are reached by, clients as the users and groups RBAC knows.
func TestCerts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p, err := writeCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, p.CA))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.crt holds no certificate")
	}
	server, client := x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth
	tests := []struct {
		name   string
		pair   pair
		usage  x509.ExtKeyUsage
		host   string
		user   string
		groups []string
	}{
		{"apiserver from outside", p.APIServer, server, "127.0.0.1", "", nil},
		{"apiserver from a pod", p.APIServer, server, "kubernetes.default.svc", "", nil},
		{"apiserver by its service IP", p.APIServer, server, serviceIP, "", nil},
		{"etcd", p.Etcd, server, "127.0.0.1", "", nil},
		{"etcd's client", p.EtcdPeer, client, "", "kube-apiserver-etcd-client", nil},
		{"admin", p.Admin, client, "", "proxybench-admin", []string{"system:masters"}},
		{"controller manager", p.ControllerManager, client, "", "system:kube-controller-manager", nil},
		{"scheduler", p.Scheduler, client, "", "system:kube-scheduler", nil},
	}
	for _, tc := range tests {
		kp, err := tls.LoadX509KeyPair(filepath.Join(dir, tc.pair.Cert), filepath.Join(dir, tc.pair.Key))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		cert, err := x509.ParseCertificate(kp.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: tc.host, KeyUsages: []x509.ExtKeyUsage{tc.usage}}); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if tc.user != "" && (cert.Subject.CommonName != tc.user || !slices.Equal(cert.Subject.Organization, tc.groups)) {
			t.Errorf("%s: user %q groups %q, want %q %q", tc.name, cert.Subject.CommonName, cert.Subject.Organization, tc.user, tc.groups)
		}
	}
	// a client certificate is no server's
	kp, err := tls.LoadX509KeyPair(filepath.Join(dir, p.Admin.Cert), filepath.Join(dir, p.Admin.Key))
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := x509.ParseCertificate(kp.Certificate[0])
	if _, err := admin.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{server}}); err == nil {
		t.Error("the admin's certificate verifies as a server's")
	}
	for _, f := range []string{p.Admin.Key, p.SAKey} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", f, err, st.Mode().Perm())
		}
	}
}

// TestKubeconfig: the paths are the ones given, relative to the kubeconfig's folder, as
// kubectl resolves them.
func TestKubeconfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := pkiNames()
	if err := writeKubeconfig(dir, "kubeconfig", "https://127.0.0.1:6443", p.CA, p.Admin); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(data, &kc); err != nil {
		t.Fatal(err)
	}
	if kc.CurrentContext != contextName || len(kc.Contexts) != 1 || kc.Contexts[0].Context.User != kc.Users[0].Name ||
		kc.Contexts[0].Context.Cluster != kc.Clusters[0].Name {
		t.Errorf("the current context does not join the cluster and the user:\n%s", data)
	}
	if got := kc.Clusters[0].Cluster; got.Server != "https://127.0.0.1:6443" || got.CertificateAuthority != "pki/ca.crt" {
		t.Errorf("cluster %+v", got)
	}
	if got := kc.Users[0].User; got.ClientCertificate != "pki/admin.crt" || got.ClientKey != "pki/admin.key" {
		t.Errorf("user %+v", got)
	}
}

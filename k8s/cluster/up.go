package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/proxybench/proxybench/stack"
)

// step is one component: how it starts, and what shows it serves.
type step struct {
	name  string
	argv  []string
	env   []string // added to ours
	ready func(ctx context.Context) error
	limit time.Duration
}

// Up starts a cluster in dir, emptied first, on free ports of 127.0.0.1, and returns once it
// serves: etcd healthy, the API server ready, the controller manager and the scheduler each
// holding its lease, the default service account made (the Job controller's pods need it), the
// operator's CRDs established and its controller's workers started. Each step is said on
// progress. On failure, every component started is stopped again, and the error names the
// step, with the last lines of its log.
//
// With node (make k8s-up NODE=1), a node runs too, in a network namespace of its own
// (node.go): the API server listens on the host's end of its veth (HostIP) instead of
// 127.0.0.1, containerd gets node's images, and Up returns once the Node is Ready and
// kube-proxy serves.
func Up(ctx context.Context, b Binaries, dir string, node *NodeOptions, progress io.Writer) (*Cluster, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	certs, err := writeCerts(dir)
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := "https://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	apiIP, authz := "127.0.0.1", "RBAC"
	if node != nil {
		// the Node authorizer lets a kubelet touch its own Node and pods only
		apiIP, authz = HostIP, "Node,RBAC"
	}
	c := &Cluster{
		Dir: dir, Server: "https://" + apiIP + ":" + strconv.Itoa(ports[2]),
		Kubeconfig: filepath.Join(dir, "kubeconfig"), Kubectl: b.Kubectl,
	}
	up := false
	defer func() {
		if !up {
			_ = c.Down()
		}
	}()
	if node != nil {
		// kept before anything is made outside the folder, so that Down finds it
		c.Node = newNode(dir)
		if err := c.Node.keepSysctls(); err != nil {
			return nil, err
		}
		c.Node.keepOutside()
		if err := c.save(); err != nil {
			return nil, err
		}
		if err := c.Node.setupNetwork(ctx); err != nil {
			return nil, err
		}
		if err := writeOperatorToken(dir); err != nil {
			return nil, err
		}
	}
	for _, k := range []struct {
		name   string
		client pair
	}{
		{"kubeconfig", certs.Admin},
		{"controller-manager.kubeconfig", certs.ControllerManager},
		{"scheduler.kubeconfig", certs.Scheduler},
		{"kubelet.kubeconfig", certs.Kubelet},
		{"kube-proxy.kubeconfig", certs.KubeProxy},
	} {
		if err := writeKubeconfig(dir, k.name, c.Server, certs.CA, k.client); err != nil {
			return nil, err
		}
	}
	etcd, err := newClient(dir, etcdURL, certs.CA, certs.EtcdPeer)
	if err != nil {
		return nil, err
	}
	api, err := newClient(dir, c.Server, certs.CA, certs.Admin)
	if err != nil {
		return nil, err
	}

	abs := func(rel string) string { return filepath.Join(dir, rel) }
	steps := []step{
		{name: "etcd", limit: 30 * time.Second, ready: etcd.healthy, argv: []string{
			b.Etcd,
			"--name=proxybench", "--data-dir=" + abs("etcd"),
			"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
			"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=proxybench=" + peerURL, "--initial-cluster-state=new",
			"--cert-file=" + abs(certs.Etcd.Cert), "--key-file=" + abs(certs.Etcd.Key),
			"--client-cert-auth", "--trusted-ca-file=" + abs(certs.CA),
			// the data is thrown away by the next Up: waiting for the disk of a shared machine
			// on every write only makes the API server time out
			"--unsafe-no-fsync",
		}},
		{name: "kube-apiserver", limit: 2 * time.Minute, ready: api.ready, argv: append([]string{
			b.APIServer,
			"--bind-address=" + apiIP, "--advertise-address=" + apiIP, "--secure-port=" + strconv.Itoa(ports[2]),
			"--etcd-servers=" + etcdURL, "--etcd-cafile=" + abs(certs.CA),
			"--etcd-certfile=" + abs(certs.EtcdPeer.Cert), "--etcd-keyfile=" + abs(certs.EtcdPeer.Key),
			"--tls-cert-file=" + abs(certs.APIServer.Cert), "--tls-private-key-file=" + abs(certs.APIServer.Key),
			"--client-ca-file=" + abs(certs.CA), "--authorization-mode=" + authz,
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + abs(certs.SAPub), "--service-account-signing-key-file=" + abs(certs.SAKey),
			"--service-cluster-ip-range=" + serviceRange,
			// Endpoints may not hold a loopback address: the kubernetes Service gets none, which
			// nothing here needs (the operator's in-cluster client is given the address itself)
			"--endpoint-reconciler-type=none", "--profiling=false",
		}, nodeAPIServerArgs(dir, certs, node)...)},
		{name: "kube-controller-manager", limit: time.Minute, ready: api.leaseHeld("kube-controller-manager"), argv: []string{
			b.ControllerManager,
			"--kubeconfig=" + abs("controller-manager.kubeconfig"), "--secure-port=0",
			"--service-account-private-key-file=" + abs(certs.SAKey), "--root-ca-file=" + abs(certs.CA),
			"--use-service-account-credentials", "--service-cluster-ip-range=" + serviceRange, "--profiling=false",
		}},
		{name: "kube-scheduler", limit: time.Minute, ready: api.leaseHeld("kube-scheduler"), argv: []string{
			b.Scheduler,
			"--kubeconfig=" + abs("scheduler.kubeconfig"), "--secure-port=0", "--profiling=false",
		}},
	}
	t0 := time.Now()
	for _, s := range steps {
		if err := c.startSaying(ctx, s, t0, progress); err != nil {
			return nil, err
		}
	}
	if err := wait(ctx, nil, "the default service account (kube-controller-manager's)", time.Minute, api.serviceAccount("default", "default")); err != nil {
		return nil, err
	}
	if node != nil {
		if err := c.startNode(ctx, *node, certs, api, t0, progress); err != nil {
			return nil, err
		}
	}
	if _, err := c.Run(ctx, "apply", "--server-side", "-f", b.CRDs); err != nil {
		return nil, fmt.Errorf("the k6-operator's CRDs: %w", err)
	}
	if err := wait(ctx, nil, "the k6-operator's CRDs", time.Minute, api.crdsEstablished(b.CRDs)); err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "k8s: %-24s up after %4.1f s\n", "CRDs", time.Since(t0).Seconds())
	mgr := step{name: "k6-operator", limit: time.Minute, argv: []string{
		b.Manager, "-kubeconfig", c.Kubeconfig,
		"-metrics-bind-address", "127.0.0.1:0", "-health-probe-bind-address", "127.0.0.1:0",
	}}
	if node != nil {
		mgr = c.operatorInCluster(mgr, certs)
	}
	mgr.ready = logHas(filepath.Join(dir, mgr.name+".log"), "Starting workers", `"testrun"`)
	if err := c.startSaying(ctx, mgr, t0, progress); err != nil {
		return nil, err
	}
	up = true
	return c, nil
}

// start starts one component, keeps it in the state file, and waits until it is ready.
func (c *Cluster) start(ctx context.Context, s step) error {
	p, err := stack.StartProcess(s.argv, append(os.Environ(), s.env...), c.Dir, filepath.Join(c.Dir, s.name+".log"))
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	c.Components = append(c.Components, Component{Name: s.name, Process: *p})
	if err := c.save(); err != nil {
		return err
	}
	return wait(ctx, p, s.name, s.limit, s.ready)
}

// startSaying is start, then a line on progress with the time since t0.
func (c *Cluster) startSaying(ctx context.Context, s step, t0 time.Time, progress io.Writer) error {
	if err := c.start(ctx, s); err != nil {
		return err
	}
	fmt.Fprintf(progress, "k8s: %-24s up after %4.1f s\n", s.name, time.Since(t0).Seconds())
	return nil
}

// wait polls ready until it succeeds, the limit passes or p (when given) exits; the error
// names what, with ready's last error and the end of p's log.
func wait(ctx context.Context, p *stack.Process, what string, limit time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var exited <-chan struct{}
	if p != nil {
		exited = p.Exited()
	}
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited during start-up (%w)%s", what, err, logTail(p))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %v: %w%s", what, limit, err, logTail(p))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func logTail(p *stack.Process) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("; last lines of %s:\n%s", p.Log, stack.Tail(p.Log, 15))
}

// freePorts are n distinct ports of 127.0.0.1 nothing listens on, all held open together so
// that the kernel gives n different ones.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

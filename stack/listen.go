package stack

import (
	"fmt"
	"net"
)

// ListenIP is the IPv4 address of spec, the stack host's address as STACK_LISTEN gives it: an
// address, or ip:port whose port is the agent's, not the targets' (each keeps its targets.json
// ports). IPv4 only: the config templates write IP:PORT, and HAProxy binds QUIC as quic4@.
func ListenIP(spec string) (string, error) {
	ip := net.ParseIP(withoutPort(spec))
	switch {
	case ip == nil || ip.To4() == nil:
		return "", fmt.Errorf("%q: want the IPv4 address a load host reaches this host on (or ip:port, the port being the agent's)", spec)
	case ip.IsUnspecified():
		return "", fmt.Errorf("%q: an unspecified address binds every interface: give the one the load host reaches", spec)
	}
	return ip.String(), nil
}

// ListenOn makes Up start every target and the upstream on the address of spec (ListenIP)
// instead of the config's loopback address, and verify them there; proxies forward to the
// upstream on that address too, which costs nothing more than loopback (the kernel routes a
// local address over the loopback device) and leaves one address per stack. Restart and Status
// follow the address the state records. The address must be one of this host's.
func (s *Stack) ListenOn(spec string) error {
	ip, err := ListenIP(spec)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return fmt.Errorf("%q: not an address of this host: %w", spec, err)
	}
	ln.Close()
	s.net = Network{Listen: ip, Upstream: ip}
	return nil
}

// withoutPort is spec's host: STACK_LISTEN may be ip:port, the port being the agent's.
func withoutPort(spec string) string {
	if h, _, err := net.SplitHostPort(spec); err == nil {
		return h
	}
	return spec
}

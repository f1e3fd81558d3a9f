// Command podpause is the pause process of the pods' sandboxes (containerd's sandbox_image):
// it holds the pod's namespaces, reaps the zombies the pod's processes leave to it as PID 1,
// and exits 0 on SIGTERM or SIGINT, as Kubernetes' build/pause/linux/pause.c does. It is
// here because the machines the pods run on can pull no registry.k8s.io/pause image.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(pause(os.Stderr))
}

func pause(stderr io.Writer) int {
	if os.Getpid() != 1 {
		fmt.Fprintln(stderr, "Warning: pause should be the first process")
	}
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	// a child that died before Notify sent a SIGCHLD no one received
	reap()
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			fmt.Fprintf(stderr, "Shutting down, got signal: %v\n", sig)
			return 0
		}
		reap()
	}
	return 0
}

// reap waits for every child that has exited. Signals coalesce: one SIGCHLD may stand for
// several children.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}

package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/proxybench/proxybench/agent"
)

// cmdAgent serves the stack of this host to a load host (agent/README.md) until interrupted.
func cmdAgent(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	listen := setting(fs, "listen", "STACK_LISTEN", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *listen == "" {
		return fmt.Errorf("-listen (STACK_LISTEN): the IP address a load host reaches this host on (ip:port: another port than %d)", agent.DefaultPort)
	}
	s, err := newStack()
	if err != nil {
		return err
	}
	return agent.ListenAndServe(ctx, s, *listen, func(format string, a ...any) { fmt.Printf(format, a...) })
}

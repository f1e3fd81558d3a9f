// Package sample reads what a run cost from /proc while it goes on: the CPU and memory of the
// target's process tree, of k6 and of the upstream, the client's load phase and whether it was
// the bottleneck, and the CPU other processes took from the machine.
package sample

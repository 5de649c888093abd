package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/calibrate"
	"github.com/benchrig/benchrig/internal/cli"
	"github.com/benchrig/benchrig/internal/cliflag"
	"github.com/benchrig/benchrig/internal/floor"
)

// calibrateCmd is `benchrig calibrate`: benchrig's own latency and client
// CPU per request for each driver against a null peer in a process of its
// own.
func calibrateCmd(a *cli.App) *cobra.Command {
	var (
		d         time.Duration
		protocols []string
		conns     []int
		asJSON    bool
	)
	c := &cobra.Command{
		Use:   "calibrate",
		Short: "Measure benchrig's own floor: latency and client CPU per request of each driver against a null peer on loopback",
		Long: `Measure benchrig's own floor on this machine: each driver (HTTP/1.1, pg wire,
RESP, gRPC) drives 1, 8 and 64 connections (--connections), closed loop,
against a null peer on 127.0.0.1 that answers a fixed response and does
nothing else: a process of its own (benchrig re-executed), on the CPUs
outside benchrig's affinity when there are such (where it polls rather than
sleeps, so no request pays to wake it); run unpinned, benchrig measures on
the upper half of its CPUs, so the peer polls on the rest. The p50 and
p99 are the least latency benchrig can measure here, and the CPU per request
what benchrig itself costs at that many connections: a target's figures
near these measure benchrig, not the target. Every run measures this once,
at one connection and at the run's own connection counts (a fraction of a
second each; --no-calibrate skips it), and every report prints it.`,
		Example: `  benchrig calibrate
  benchrig calibrate --protocols http --connections 1,10 --duration 5s --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return floor.Calibrate(a.Ctx, a.Stdout, d, protocols, conns, asJSON, a.OwnProcess)
		},
	}
	cliflag.DurationVarP(c.Flags(), &d, "duration", "d", calibrate.DefaultDuration, "how long to drive each protocol at each connection count")
	c.Flags().IntSliceVarP(&conns, "connections", "c", []int{1, 8, 64}, fmt.Sprintf("the connection counts to measure at (1 to %d each)", calibrate.MaxConnections))
	c.Flags().StringSliceVar(&protocols, "protocols", calibrate.Protocols(), "the protocols to measure (comma-separated)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the floor as JSON (the results header's floor field)")
	return c
}

// Package agent runs one suite's load from several machines: a coordinator
// (benchrig run SUITE --agents N) and N agents (benchrig agent
// --coordinator ADDR). The coordinator runs the ordinary Runner (same plan
// order, targets, phases, sampler, verdicts and results file) with an
// Executor that hands each agent its share of a sample's cell (package
// load's Share: connections, rate and sequence numbers, hence keys, split so
// that their union is exactly the single-machine workload), releases every
// window at a common start time, and merges the parts losslessly (HDR
// histograms merged, counters summed, per-second timelines aligned on its
// own clock) into the sample's one result.Load.
//
// The protocol is JSON lines over TCP. Both sides prove they hold the shared
// token with an HMAC of the other's nonce: the token itself never crosses
// the wire, and is never written to results or logs. Each side sends a
// heartbeat every HeartbeatEvery; an agent that hears nothing from its
// coordinator for DeadMan stops all load at once (a dead-man switch: no
// agent keeps loading a server on its own), and a coordinator that hears
// nothing from an agent for AgentTimeout records the sample failed, naming
// the missing share, and goes on with the agents left.
//
//	coord := agent.NewCoordinator(agent.CoordinatorConfig{Agents: 3, Token: tok})
//	_ = coord.Listen(ctx, "127.0.0.1:7946")
//	_ = coord.Wait(ctx, resolvedSuite, smoke)
//	opts := run.PlanOptions{Executor: coord.Executor()}
package agent

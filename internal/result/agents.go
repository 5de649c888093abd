package result

// AgentPart records one agent's part of a sample measured by several
// agents (benchrig run --agents N): which share it ran, where, how far its
// clock was from the coordinator's, and its own figures, beside the merged
// Load. A part whose agent died or timed out carries Error.
type AgentPart struct {
	// Agent is the agent's index as it joined (its --index, or the one
	// the coordinator gave it); Share the part of the cell it ran ("1/3").
	Agent int    `json:"agent"`
	Share string `json:"share"`
	// Addr is the agent's address as the coordinator saw it.
	Addr string `json:"addr,omitempty"`
	Host *Host  `json:"host,omitempty"`
	// ClockOffsetUS is the agent's wall clock minus the coordinator's,
	// measured by an NTP-style exchange before the sample (best of
	// several round trips), and RTTUS that exchange's round-trip time.
	ClockOffsetUS int64 `json:"clock_offset_us"`
	RTTUS         int64 `json:"rtt_us"`
	// StartSkewUS is how far after the coordinator's common start time
	// this agent's load window began, on the coordinator's clock.
	StartSkewUS int64 `json:"start_skew_us"`
	Connections int   `json:"connections"`
	Sent        int64 `json:"sent"`
	Requests    int64 `json:"requests"`
	Errors      int64 `json:"errors"`
	// Client is the agent's own CPU over its window.
	Client *Client `json:"client,omitempty"`
	// Error says why the part is missing.
	Error string `json:"error,omitempty"`
}

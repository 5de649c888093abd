package result

// Companion is a process tree sampled beside a sample's target (its
// database, for an application benchmark): its own resource samples and
// figures, derived over the same load window and completed requests.
type Companion struct {
	// Name labels the companion in reports (the suite's companion name).
	Name string `json:"name"`
	// Role is RoleHeadline when the companion's figures are the sample's
	// headline server figures, else RoleCompanion.
	Role string `json:"role"`
	// Target describes the process: kind (postgres, redis, attach), PID.
	Target *TargetInfo `json:"target,omitempty"`
	// Server holds the companion's figures and raw samples, as
	// Sample.Server does for the target.
	Server *Server `json:"server,omitempty"`
	// Error says why the companion could not be sampled.
	Error string `json:"error,omitempty"`
}

// Roles of a sampled process.
const (
	RoleHeadline  = "headline"
	RoleCompanion = "companion"
)

// HeadlineServer is the server whose figures are the sample's "server
// µs/request", cores and peak memory: the companion whose role is
// RoleHeadline, else the target's own (Server).
func (s *Sample) HeadlineServer() *Server {
	for i := range s.Companions {
		if c := &s.Companions[i]; c.Role == RoleHeadline {
			return c.Server
		}
	}
	return s.Server
}

// HeadlineName names the headline process: the headline companion's name,
// else the target's ("" when the sample has no target).
func (s *Sample) HeadlineName() string {
	for _, c := range s.Companions {
		if c.Role == RoleHeadline {
			return c.Name
		}
	}
	if s.Target != nil {
		return s.Target.Name
	}
	return ""
}

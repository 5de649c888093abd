package result

import "time"

// ClientCPUSample is benchrig's own cumulative CPU at one moment of a sample,
// read once per second through every phase (getrusage), like the server's
// resource samples.
type ClientCPUSample struct {
	Time          time.Time `json:"time"`
	Offset        float64   `json:"offset"` // seconds since the sample's first resource sample, same origin as ResourceSample.Offset
	Phase         string    `json:"phase"`
	UserSeconds   float64   `json:"user_seconds"` // cumulative since the sample began
	SystemSeconds float64   `json:"system_seconds"`
}

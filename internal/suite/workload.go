package suite

import "math"

// Workload kinds.
const (
	// WorkloadHot cycles through the first Hot of Rows keys.
	WorkloadHot = "hot"
	// WorkloadCold sweeps all Rows keys once, batch by batch: the sample
	// is Rows/batch requests long, runs closed loop and cannot be
	// rate-driven.
	WorkloadCold = "cold"
	// WorkloadUniform draws keys uniformly from Rows.
	WorkloadUniform = "uniform"
	// WorkloadZipf draws keys from Rows with a zipf distribution of
	// exponent ZipfS.
	WorkloadZipf = "zipf"
)

// Workload is a key sequence and read/write mix for pg and RESP paths.
type Workload struct {
	// Kind is hot, cold, uniform or zipf.
	Kind string `json:"kind"`
	// Rows is the key space, keys 1..Rows (default 4096).
	Rows int64 `json:"rows"`
	// Hot is the size of the hot set of a hot workload (default 128).
	Hot int64 `json:"hot,omitempty"`
	// Writes is the percentage of operations that write, 0–100.
	Writes float64 `json:"writes,omitempty"`
	// ZipfS is the exponent of a zipf workload, > 1 (default 1.1).
	ZipfS float64 `json:"zipf_s,omitempty"`
}

// Defaults of workloads.
const (
	DefaultRows  = 4096
	DefaultHot   = 128
	DefaultZipfS = 1.1
)

// workloadDefaults fills the defaults of a decoded workload.
func (s *Suite) workloadDefaults(name string, w *Workload) {
	f := child("workloads", name)
	if !s.loc.present(f + ".rows") {
		w.Rows = DefaultRows
	}
	if w.Kind == WorkloadHot && !s.loc.present(f+".hot") {
		w.Hot = DefaultHot
	}
	if w.Kind == WorkloadZipf && !s.loc.present(f+".zipf_s") {
		w.ZipfS = DefaultZipfS
	}
}

func (s *Suite) validateWorkload(name string, w *Workload) {
	l, f := s.loc, child("workloads", name)
	l.checkName(f, name)
	if w == nil {
		l.errf(f, "needs kind: hot, cold, uniform or zipf")
		return
	}
	switch w.Kind {
	case WorkloadHot, WorkloadCold, WorkloadUniform, WorkloadZipf:
	case "":
		l.errf(f+".kind", "required; accepted: hot, cold, uniform, zipf")
	default:
		l.errf(f+".kind", "unknown kind %q; accepted: hot, cold, uniform, zipf", w.Kind)
	}
	if w.Rows < 1 {
		l.errf(f+".rows", "must be ≥ 1, got %d", w.Rows)
	}
	if w.Kind == WorkloadHot {
		if w.Hot < 1 || w.Hot > w.Rows {
			l.errf(f+".hot", "must be between 1 and rows (%d), got %d", w.Rows, w.Hot)
		}
	} else if l.present(f + ".hot") {
		l.errf(f+".hot", "only a hot workload has a hot set; kind is %q", w.Kind)
	}
	if w.Kind == WorkloadZipf {
		if !(w.ZipfS > 1) || math.IsInf(w.ZipfS, 0) {
			l.errf(f+".zipf_s", "must be > 1, got %s", fmtFloat(w.ZipfS))
		}
	} else if l.present(f + ".zipf_s") {
		l.errf(f+".zipf_s", "only a zipf workload has an exponent; kind is %q", w.Kind)
	}
	if w.Writes < 0 || w.Writes > 100 {
		l.errf(f+".writes", "must be a percentage between 0 and 100, got %s", fmtFloat(w.Writes))
	}
}

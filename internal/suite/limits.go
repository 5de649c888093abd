package suite

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/benchrig/benchrig/internal/cgroup"
)

// Limits run a command target's whole process tree in a control group of
// its own per sample, as a container runtime's --cpus, --memory,
// --memory-swap and --pids-limit do (package cgroup): cpus is CPU time per
// wall-clock second in cores (1.5), memory and swap sizes (512MiB, 2g;
// 1024-based), pids the most processes and threads. Each may be a param
// placeholder ({cpus}), so that one target is measured at several limits
// as a matrix axis (params: {cpus: ["0.5", "2"]}).
type Limits struct {
	CPUs   string `json:"cpus,omitempty"`
	Memory string `json:"memory,omitempty"`
	Swap   string `json:"swap,omitempty"`
	Pids   string `json:"pids,omitempty"`
}

// Resolve parses the limits (placeholders already substituted) into the
// kernel's terms, each field bounded (cgroup.Limits.Validate). A field
// error names the field.
func (l *Limits) Resolve() (cgroup.Limits, error) {
	var out cgroup.Limits
	if l == nil {
		return out, nil
	}
	if s := strings.TrimSpace(l.CPUs); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return out, fmt.Errorf("cpus: %q is not a number of cores (e.g. 0.5, 2)", l.CPUs)
		}
		out.CPUs = v
		if err := (cgroup.Limits{CPUs: v}).Validate(); err != nil {
			return out, fmt.Errorf("cpus: %v", strings.TrimPrefix(err.Error(), "cgroup: "))
		}
	}
	if s := strings.TrimSpace(l.Memory); s != "" {
		v, err := cgroup.ParseMemory(s)
		if err != nil {
			return out, fmt.Errorf("memory: %v", err)
		}
		out.Memory = v
		if err := (cgroup.Limits{Memory: v}).Validate(); err != nil {
			return out, fmt.Errorf("memory: %v", strings.TrimPrefix(err.Error(), "cgroup: "))
		}
	}
	if s := strings.TrimSpace(l.Swap); s != "" {
		v, err := cgroup.ParseMemory(s)
		if err != nil {
			return out, fmt.Errorf("swap: %v", err)
		}
		out.Swap = &v
	}
	if s := strings.TrimSpace(l.Pids); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return out, fmt.Errorf("pids: %q is not a count of processes (e.g. 256)", l.Pids)
		}
		out.Pids = v
		if err := (cgroup.Limits{Pids: v}).Validate(); err != nil {
			return out, fmt.Errorf("pids: %v", strings.TrimPrefix(err.Error(), "cgroup: "))
		}
	}
	if err := out.Validate(); err != nil {
		return out, fmt.Errorf("swap: %v", strings.TrimPrefix(err.Error(), "cgroup: "))
	}
	return out, nil
}

// expand substitutes the params into the limits.
func (l *Limits) expand(vars map[string]string) *Limits {
	if l == nil {
		return nil
	}
	return &Limits{CPUs: Expand(l.CPUs, vars), Memory: Expand(l.Memory, vars), Swap: Expand(l.Swap, vars), Pids: Expand(l.Pids, vars)}
}

// checkLimits checks a target's limits: on a command target only, each
// field parsed and bounded when it holds no placeholder (a placeholder is
// checked with every value of its param).
func (s *Suite) checkLimits(f string, t *Target) {
	lm := t.Limits
	if lm == nil {
		return
	}
	if t.Kind() != KindCommand {
		s.loc.errf(f+".limits", "not accepted for a %s target: limits run the process tree benchrig starts (a command target) in a control group of its own", t.Kind())
		return
	}
	allowed := map[string]bool{}
	for name := range t.Params {
		allowed[name] = true
	}
	for _, fl := range []struct{ name, v string }{{"cpus", lm.CPUs}, {"memory", lm.Memory}, {"swap", lm.Swap}, {"pids", lm.Pids}} {
		s.loc.checkPlaceholders(f+".limits."+fl.name, fl.v, allowed, nil)
	}
	for _, vars := range paramCombos(t.Params) {
		if _, err := lm.expand(vars).Resolve(); err != nil {
			field, msg, _ := strings.Cut(err.Error(), ": ")
			switch field {
			case "cpus", "memory", "swap", "pids":
			default:
				field, msg = "", err.Error()
			}
			where := f + ".limits"
			if field != "" {
				where += "." + field
			}
			if len(vars) > 0 {
				msg += fmt.Sprintf(" (with params %v)", vars)
			}
			s.loc.errf(where, "%s", msg)
			return
		}
	}
}

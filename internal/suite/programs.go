package suite

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/benchrig/benchrig/internal/proc"
)

// CheckPrograms checks, on this machine, that the program of every command
// target given as a path (with a '/') is an executable file, so that plan
// refuses what run would. A relative program is resolved as run resolves
// it: against the target's dir (itself relative to cwd), else cwd, the
// directory benchrig runs in. It is never resolved against the suite
// file's directory. plan and run call it; verify, which re-expands a
// recorded suite on any machine, does not. Programs and dirs with
// placeholders, and bare names looked up in $PATH, are not checked.
func (s *Suite) CheckPrograms(cwd string) error {
	if s.loc == nil {
		s.loc = newLocated(s.Source.File)
	}
	s.loc.errs = nil
	for _, name := range sortedKeys(s.Targets) {
		t := s.Targets[name]
		if t == nil || t.Kind() != KindCommand || len(t.Command) == 0 {
			continue
		}
		prog, dir := t.Command[0], t.Dir
		if !strings.Contains(prog, "/") || strings.Contains(prog, "{") || strings.Contains(dir, "{") {
			continue
		}
		base, from := cwd, "the directory benchrig runs in ("+cwd+")"
		if dir != "" {
			base = dir
			if !filepath.IsAbs(dir) {
				base = filepath.Join(cwd, dir)
			}
			from = "the target's dir (" + base + ")"
		}
		path := prog
		if !filepath.IsAbs(prog) {
			path = filepath.Join(base, prog)
		}
		field := index(child("targets", name)+".command", 0)
		st, err := os.Stat(path)
		switch {
		case err != nil && filepath.IsAbs(prog):
			s.loc.errf(field, "program %s: not found", prog)
		case err != nil:
			s.loc.errf(field, "program %s: not found at %s: a relative program is resolved against %s, not the suite file's directory; run benchrig from the directory it is relative to, set dir, or give an absolute path", prog, path, from)
		case st.IsDir() || st.Mode()&0o111 == 0:
			s.loc.errf(field, "program %s (%s): not an executable file", prog, path)
		}
	}
	return s.loc.result()
}

// CheckPlacement checks, on this machine, that every CPU list of the
// suite (placement.client_cpus, placement.target_cpus, a target's cpus)
// names CPUs benchrig may run on, so that plan and the quick modes refuse,
// with the field and the CPUs there are, what would fail every sample. Like
// CheckPrograms it is not part of Parse: verify re-expands a recorded suite
// on any machine.
func (s *Suite) CheckPlacement() error {
	if s.loc == nil {
		s.loc = newLocated(s.Source.File)
	}
	s.loc.errs = nil
	// benchrig pins itself within its own affinity; the targets it starts
	// may go to any online CPU.
	check := func(field string, l CPUList, allowed func([]int) error) {
		if l == "" || strings.Contains(string(l), "{") {
			return
		}
		cpus, err := l.CPUs()
		if err != nil {
			return // Parse reported it
		}
		if err := allowed(cpus); err != nil {
			s.loc.errf(field, "%v", err)
		}
	}
	check("placement.client_cpus", s.Placement.ClientCPUs, proc.CheckAllowed)
	check("placement.target_cpus", s.Placement.TargetCPUs, proc.CheckOnline)
	for _, name := range sortedKeys(s.Targets) {
		if t := s.Targets[name]; t != nil {
			check(child("targets", name)+".cpus", t.CPUs, proc.CheckOnline)
		}
	}
	return s.loc.result()
}

package cgroup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// RemoveStale removes the groups a benchrig left behind when it was killed
// before it could remove them (SIGKILL, a crash): every benchrig-* group
// under h's parents whose owner, named in the group's name by PID and
// start time, is no longer running, killing what is still in it as Remove
// does. A group whose owner runs is left, whatever it holds, so it is safe
// beside live runs (a watchdog calls it). The start time tells the owner
// from a later process that reused its PID; the directories' own times
// cannot, as cgroupfs reports no creation time. It returns the names of the
// groups removed, and the first error, having tried every group.
func RemoveStale(ctx context.Context, h *Hierarchy) ([]string, error) {
	var names []string
	var firstErr error
	for _, parent := range h.parents {
		entries, err := os.ReadDir(parent)
		if errors.Is(err, os.ErrNotExist) {
			continue // a shared parent not made yet
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
		for _, e := range entries {
			pid, start, ok := parseOwner(e.Name())
			if !e.IsDir() || !ok || slices.Contains(names, e.Name()) || h.procFS.SameProcess(pid, start) {
				continue
			}
			g := &Group{h: h, name: e.Name(), dirs: map[string]string{}}
			for c, p := range h.parents {
				dir := filepath.Join(p, e.Name())
				g.dirs[c] = dir
				if !slices.Contains(g.order, dir) {
					g.order = append(g.order, dir)
				}
			}
			if err := g.Remove(ctx); err != nil && firstErr == nil {
				firstErr = err
			}
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, firstErr
}

// parseOwner reads the owner out of a group name,
// benchrig-<pid>-<start>-<name>.
func parseOwner(name string) (pid int, start uint64, ok bool) {
	rest, ok := strings.CutPrefix(name, namePrefix)
	if !ok {
		return 0, 0, false
	}
	f := strings.SplitN(rest, "-", 3)
	if len(f) != 3 || f[2] == "" {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	return pid, start, err1 == nil && err2 == nil && pid > 0
}

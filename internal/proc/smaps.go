package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// SmapsRollup is the sum over a process's mappings that
// /proc/PID/smaps_rollup gives, in bytes. PSS (proportional set size)
// counts each shared page divided by the number of processes mapping it, so
// the PSS of a process tree does not count shared memory once per process.
type SmapsRollup struct {
	Rss, Pss                   uint64
	PssAnon, PssFile, PssShmem uint64
	SharedClean, SharedDirty   uint64
	PrivateClean, PrivateDirty uint64
	Swap, SwapPss              uint64
}

// SmapsRollup reads and parses /proc/PID/smaps_rollup. The kernel walks
// every mapped page for it: it costs milliseconds for a large process.
func (fs FS) SmapsRollup(pid int) (SmapsRollup, error) {
	path := fs.pidPath(pid, "smaps_rollup")
	b, err := os.ReadFile(path)
	if err != nil {
		return SmapsRollup{}, err
	}
	s, err := ParseSmapsRollup(b)
	if err != nil {
		return SmapsRollup{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseSmapsRollup parses the text of a smaps_rollup file: a header line
// (the address range and "[rollup]") and "Key:   N kB" lines. An empty file
// (a kernel thread, or a process that exited while being read) and a file
// without a Pss line are errors wrapping ErrFormat.
func ParseSmapsRollup(b []byte) (SmapsRollup, error) {
	var s SmapsRollup
	fields := map[string]*uint64{
		"Rss": &s.Rss, "Pss": &s.Pss, "Pss_Anon": &s.PssAnon, "Pss_File": &s.PssFile,
		"Pss_Shmem": &s.PssShmem, "Shared_Clean": &s.SharedClean, "Shared_Dirty": &s.SharedDirty,
		"Private_Clean": &s.PrivateClean, "Private_Dirty": &s.PrivateDirty, "Swap": &s.Swap, "SwapPss": &s.SwapPss,
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	havePss := false
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		dst, known := fields[key]
		if !known {
			continue
		}
		n, err := parseKB(strings.TrimSpace(val))
		if err != nil {
			return SmapsRollup{}, fmt.Errorf("%w: smaps_rollup: %s %q: %w", ErrFormat, key, strings.TrimSpace(val), err)
		}
		*dst = n
		havePss = havePss || key == "Pss"
	}
	if !havePss {
		return SmapsRollup{}, fmt.Errorf("%w: smaps_rollup: no Pss line", ErrFormat)
	}
	return s, nil
}

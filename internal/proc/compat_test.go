package proc

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/procfs"
)

// The tests in this file were the sampler's, written against procfs, which
// is the reference the stat and schedstat parsers must agree with (on the
// sampler's fixture tree, checked in under testdata/sampler).

// fromProcfs converts procfs's parse of a stat file to a Stat without the
// command name (what ReadStat returns).
func fromProcfs(st procfs.ProcStat) Stat {
	return Stat{
		PID:        st.PID,
		State:      st.State[0],
		PPID:       st.PPID,
		PGRP:       st.PGRP,
		Session:    st.Session,
		UTime:      uint64(st.UTime),
		STime:      uint64(st.STime),
		CUTime:     uint64(max(st.CUTime, 0)),
		CSTime:     uint64(max(st.CSTime, 0)),
		NumThreads: st.NumThreads,
		StartTime:  st.Starttime,
		RSSPages:   uint64(max(st.RSS, 0)),
	}
}

// TestParseStatAgreesWithProcfs parses every stat file of the fixture tree
// with both parsers.
func TestParseStatAgreesWithProcfs(t *testing.T) {
	pfs, err := procfs.NewFS("testdata/sampler/proc")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/sampler/proc/*/stat")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture stat files: %v", err)
	}
	for _, f := range files {
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		p, err := pfs.Proc(pid)
		if err != nil {
			t.Fatal(err)
		}
		want, err := p.Stat()
		if err != nil {
			t.Fatalf("procfs: %s: %v", f, err)
		}
		got, err := ReadStatFile(f, make([]byte, 4096))
		if err != nil {
			t.Fatalf("ReadStatFile(%s): %v", f, err)
		}
		if got != fromProcfs(want) {
			t.Errorf("%s: got %+v, procfs says %+v", f, got, fromProcfs(want))
		}
	}
}

// TestParseStatLive parses the stat file of this process with both parsers.
// Only fields that do not change between two reads are compared.
func TestParseStatLive(t *testing.T) {
	path := "/proc/self/stat"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no %s: %v", path, err)
	}
	got, err := ParseStat(data)
	if err != nil {
		t.Fatalf("ParseStat(%q): %v", data, err)
	}
	p, err := procfs.Self()
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if got.PPID != want.PPID || got.StartTime != want.Starttime || got.PPID != os.Getppid() || got.Comm != want.Comm {
		t.Errorf("ParseStat: ppid %d start %d comm %q; procfs: ppid %d start %d comm %q; os.Getppid %d",
			got.PPID, got.StartTime, got.Comm, want.PPID, want.Starttime, want.Comm, os.Getppid())
	}
	if got.NumThreads < 1 || got.RSSPages == 0 {
		t.Errorf("ParseStat: %d threads, %d RSS pages for a running Go test", got.NumThreads, got.RSSPages)
	}
}

// statLine builds a stat line with the given comm and the fields after it.
func statLine(comm string) string {
	return "42 (" + comm + ") S 7 42 42 0 -1 0 0 0 0 0 11 12 13 14 20 0 3 0 99 1000 55 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
}

func TestParseStatNames(t *testing.T) {
	for _, comm := range []string{"postgres", "a b", "a) b", "((", ") ) )", "", "x (y) z", "😀"} {
		want := Stat{PID: 42, Comm: comm, State: 'S', PPID: 7, PGRP: 42, Session: 42, UTime: 11, STime: 12, CUTime: 13, CSTime: 14, NumThreads: 3, StartTime: 99, RSSPages: 55}
		got, err := ParseStat([]byte(statLine(comm)))
		if err != nil || got != want {
			t.Errorf("comm %q: got %+v, %v; want %+v", comm, got, err, want)
		}
	}

	bad := []struct {
		name, line string
	}{
		{"empty", ""},
		{"no comm", "42 S 7 1 1\n"},
		{"nothing after comm", "42 (x)"},
		{"too few fields", "42 (x) S 7 42 42 0 -1 0 0 0 0 0 11 12\n"},
		{"two-letter state", strings.Replace(statLine("x"), ") S ", ") SS ", 1)},
		{"bad ppid", strings.Replace(statLine("x"), ") S 7 ", ") S seven ", 1)},
		{"bad utime", strings.Replace(statLine("x"), " 11 12 ", " 1x 12 ", 1)},
		{"utime overflows", strings.Replace(statLine("x"), " 11 12 ", " 99999999999999999999 12 ", 1)},
		{"double minus", strings.Replace(statLine("x"), ") S 7 ", ") S --7 ", 1)},
	}
	for _, tc := range bad {
		if got, err := ParseStat([]byte(tc.line)); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: ParseStat(%q) = %+v, %v; want an ErrFormat error", tc.name, tc.line, got, err)
		}
	}

	// Negative cutime and rss never occur, but read as 0 rather than fail.
	neg := strings.Replace(statLine("x"), " 13 14 ", " -13 14 ", 1)
	if got, err := ParseStat([]byte(neg)); err != nil || got.CUTime != 0 {
		t.Errorf("negative cutime: %+v, %v", got, err)
	}
}

// TestSchedstatAgreesWithProcfs parses every schedstat file of the fixture
// tree with both parsers.
func TestSchedstatAgreesWithProcfs(t *testing.T) {
	files, _ := filepath.Glob("testdata/sampler/proc/*/task/*/schedstat")
	more, _ := filepath.Glob("testdata/sampler/proc/*/schedstat")
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no fixture schedstat files")
	}
	for _, f := range files {
		// procfs reads /proc/PID/schedstat; point it at the file's directory's parent.
		dir := filepath.Dir(f)
		pid, _ := strconv.Atoi(filepath.Base(dir))
		pfs, err := procfs.NewFS(filepath.Dir(dir))
		if err != nil {
			t.Fatal(err)
		}
		p, err := pfs.Proc(pid)
		if err != nil {
			t.Fatal(err)
		}
		want, err := p.Schedstat()
		if err != nil {
			t.Fatalf("procfs: %s: %v", f, err)
		}
		got, err := ReadSchedstatFile(f, make([]byte, 256))
		if err != nil || uint64(got) != want.RunningNanoseconds {
			t.Errorf("%s: got %d, %v; procfs says %d", f, got, err, want.RunningNanoseconds)
		}
	}
	for _, bad := range []string{"", "\n", "12", "-1 2 3\n", "x 2 3\n", " 1 2 3\n", "99999999999999999999 1 1\n"} {
		if got, err := ParseSchedstat([]byte(bad)); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseSchedstat(%q) = %d, %v; want an ErrFormat error", bad, got, err)
		}
	}
}

func TestReadStatErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadStatFile(filepath.Join(dir, "missing"), make([]byte, 64)); !Vanished(err) {
		t.Errorf("missing file: %v, want a not-exist error", err)
	}
	long := filepath.Join(dir, "long")
	if err := os.WriteFile(long, []byte(statLine(strings.Repeat("x", 100))), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadStatFile(long, make([]byte, 64)); !errors.Is(err, ErrFormat) {
		t.Errorf("file longer than the buffer: %v", err)
	}
}

// FuzzParseStatFields checks that ParseStat never panics and agrees with a
// plain reading of the fields when it accepts a line.
func FuzzParseStatFields(f *testing.F) {
	files, _ := filepath.Glob("testdata/sampler/proc/*/stat")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(statLine("a) (b")))
	f.Add([]byte("1 () R 0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseStat(data)
		if err != nil {
			return
		}
		s := string(data)
		fields := strings.Split(s[strings.LastIndexByte(s, ')')+2:], " ")
		if len(fields) < 22 {
			t.Fatalf("accepted %q with %d fields", data, len(fields))
		}
		if string([]byte{st.State}) != fields[0] {
			t.Fatalf("state %q, field %q", st.State, fields[0])
		}
		if strconv.Itoa(st.PPID) != fields[1] && "+"+strconv.Itoa(st.PPID) != fields[1] {
			if n, err := strconv.Atoi(fields[1]); err != nil || n != st.PPID {
				t.Fatalf("ppid %d, field %q", st.PPID, fields[1])
			}
		}
		if u, err := strconv.ParseUint(fields[19], 10, 64); err == nil && u != st.StartTime {
			t.Fatalf("start %d, field %q", st.StartTime, fields[19])
		}
	})
}

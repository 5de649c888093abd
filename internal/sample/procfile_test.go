package sample

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/procfs"
)

// fromProcfs converts procfs's parse of a stat file to statFields, the
// reference that parseStat must agree with.
func fromProcfs(st procfs.ProcStat) statFields {
	return statFields{
		state:    st.State[0],
		ppid:     st.PPID,
		utime:    uint64(st.UTime),
		stime:    uint64(st.STime),
		cutime:   uint64(max(st.CUTime, 0)),
		cstime:   uint64(max(st.CSTime, 0)),
		threads:  st.NumThreads,
		start:    st.Starttime,
		rssPages: uint64(max(st.RSS, 0)),
	}
}

// TestParseStatAgreesWithProcfs parses every stat file of the fixture tree
// with both parsers.
func TestParseStatAgreesWithProcfs(t *testing.T) {
	pfs, err := procfs.NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/proc/*/stat")
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
		got, err := readStat(f, make([]byte, 4096))
		if err != nil {
			t.Fatalf("readStat(%s): %v", f, err)
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
	got, err := parseStat(data)
	if err != nil {
		t.Fatalf("parseStat(%q): %v", data, err)
	}
	p, err := procfs.Self()
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if got.ppid != want.PPID || got.start != want.Starttime || got.ppid != os.Getppid() {
		t.Errorf("parseStat: ppid %d start %d; procfs: ppid %d start %d; os.Getppid %d",
			got.ppid, got.start, want.PPID, want.Starttime, os.Getppid())
	}
	if got.threads < 1 || got.rssPages == 0 {
		t.Errorf("parseStat: %d threads, %d RSS pages for a running Go test", got.threads, got.rssPages)
	}
}

// statLine builds a stat line with the given comm and the fields after it.
func statLine(comm string) string {
	return "42 (" + comm + ") S 7 42 42 0 -1 0 0 0 0 0 11 12 13 14 20 0 3 0 99 1000 55 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
}

func TestParseStat(t *testing.T) {
	want := statFields{state: 'S', ppid: 7, utime: 11, stime: 12, cutime: 13, cstime: 14, threads: 3, start: 99, rssPages: 55}
	for _, comm := range []string{"postgres", "a b", "a) b", "((", ") ) )", "", "x (y) z", "😀"} {
		got, err := parseStat([]byte(statLine(comm)))
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
		if got, err := parseStat([]byte(tc.line)); !errors.Is(err, errFormat) {
			t.Errorf("%s: parseStat(%q) = %+v, %v; want an errFormat error", tc.name, tc.line, got, err)
		}
	}

	// Negative cutime and rss never occur, but read as 0 rather than fail.
	neg := strings.Replace(statLine("x"), " 13 14 ", " -13 14 ", 1)
	if got, err := parseStat([]byte(neg)); err != nil || got.cutime != 0 {
		t.Errorf("negative cutime: %+v, %v", got, err)
	}
}

// TestSchedstatAgreesWithProcfs parses every schedstat file of the fixture
// tree with both parsers.
func TestSchedstatAgreesWithProcfs(t *testing.T) {
	files, _ := filepath.Glob("testdata/proc/*/task/*/schedstat")
	more, _ := filepath.Glob("testdata/proc/*/schedstat")
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
		got, err := readSchedstat(f, make([]byte, 256))
		if err != nil || got != want.RunningNanoseconds {
			t.Errorf("%s: got %d, %v; procfs says %d", f, got, err, want.RunningNanoseconds)
		}
	}
	for _, bad := range []string{"", "\n", "12", "-1 2 3\n", "x 2 3\n", " 1 2 3\n", "99999999999999999999 1 1\n"} {
		if got, err := parseSchedstat([]byte(bad)); !errors.Is(err, errFormat) {
			t.Errorf("parseSchedstat(%q) = %d, %v; want an errFormat error", bad, got, err)
		}
	}
}

func TestReadStatErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := readStat(filepath.Join(dir, "missing"), make([]byte, 64)); !vanished(err) {
		t.Errorf("missing file: %v, want a not-exist error", err)
	}
	long := filepath.Join(dir, "long")
	if err := os.WriteFile(long, []byte(statLine(strings.Repeat("x", 100))), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readStat(long, make([]byte, 64)); !errors.Is(err, errFormat) {
		t.Errorf("file longer than the buffer: %v", err)
	}
}

// FuzzParseStat checks that parseStat never panics and agrees with a plain
// reading of the fields when it accepts a line.
func FuzzParseStat(f *testing.F) {
	files, _ := filepath.Glob("testdata/proc/*/stat")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(statLine("a) (b")))
	f.Add([]byte("1 () R 0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseStat(data)
		if err != nil {
			return
		}
		s := string(data)
		fields := strings.Split(s[strings.LastIndexByte(s, ')')+2:], " ")
		if len(fields) < 22 {
			t.Fatalf("accepted %q with %d fields", data, len(fields))
		}
		if string([]byte{st.state}) != fields[0] {
			t.Fatalf("state %q, field %q", st.state, fields[0])
		}
		if strconv.Itoa(st.ppid) != fields[1] && "+"+strconv.Itoa(st.ppid) != fields[1] {
			if n, err := strconv.Atoi(fields[1]); err != nil || n != st.ppid {
				t.Fatalf("ppid %d, field %q", st.ppid, fields[1])
			}
		}
		if u, err := strconv.ParseUint(fields[19], 10, 64); err == nil && u != st.start {
			t.Fatalf("start %d, field %q", st.start, fields[19])
		}
	})
}

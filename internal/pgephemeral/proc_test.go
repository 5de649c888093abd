package pgephemeral

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/proc"
)

func TestDescendantsFixture(t *testing.T) {
	root := t.TempDir()
	write := func(pid, ppid int, state, comm string) {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		line := strconv.Itoa(pid) + " (" + comm + ") " + state + " " + strconv.Itoa(ppid) + " 100 100 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 " + strconv.Itoa(1000+pid) + " 1000 10\n"
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(100, 1, "S", "postgres")
	write(101, 100, "S", "postgres: checkpointer ")
	write(102, 100, "R", "postgres: u db 127.0.0.1(5) idle")
	write(103, 102, "S", "odd ) name (")
	write(104, 100, "Z", "postgres")
	write(200, 1, "S", "other")
	if err := os.WriteFile(filepath.Join(root, "uptime"), []byte("1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := proc.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	got := descendants(fs, 100)
	sort.Ints(got)
	want := []int{101, 102, 103}
	if len(got) != len(want) {
		t.Fatalf("descendants = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("descendants = %v, want %v", got, want)
		}
	}
	if alive(fs, 104) || !alive(fs, 103) || alive(fs, 999) {
		t.Error("alive misjudges zombies, odd names or missing processes")
	}
	if left := waitGone(fs, []int{104, 999}, 0); len(left) != 0 {
		t.Errorf("waitGone counts %v as alive", left)
	}
}

func TestFindBinaries(t *testing.T) {
	empty := t.TempDir()
	if _, err := FindBinaries(t.Context(), empty); err == nil || !errorsIs(err, ErrNoBinaries) {
		t.Errorf("FindBinaries(empty dir) = %v, want ErrNoBinaries", err)
	}
	for _, tc := range []struct {
		in      string
		version string
		major   int
	}{
		{"postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n", "15.18 (Debian 15.18-0+deb12u1)", 15},
		{"postgres (PostgreSQL) 17beta1", "17beta1", 17},
		{"postgres (PostgreSQL) 9.6.24", "9.6.24", 9},
		{"something else 1.2", "", 0},
	} {
		v, m := pgclient.ParseVersion(tc.in)
		if v != tc.version || m != tc.major {
			t.Errorf("ParseVersion(%q) = %q %d, want %q %d", tc.in, v, m, tc.version, tc.major)
		}
	}
	if versionOf("/usr/lib/postgresql/16/bin") <= versionOf("/usr/lib/postgresql/9.6/bin") {
		t.Error("versionOf orders 16 below 9.6")
	}
	if versionOf("/usr/pgsql-17/bin") != 17 {
		t.Error("versionOf(/usr/pgsql-17/bin) != 17")
	}
}

package history

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/benchrig/benchrig/internal/history/synth"
	"github.com/benchrig/benchrig/internal/plan"
)

// crashChildEnv, set, makes the test binary the importer that
// TestHistoryKill9 kills: it imports the files named by its arguments
// into the SQLite file the variable names, printing a line per file,
// each once a byte of its standard input lets it start.
const crashChildEnv = "BENCHRIG_HISTORY_CRASH_DB"

func TestMain(m *testing.M) {
	if db := os.Getenv(crashChildEnv); db != "" {
		os.Exit(crashChild(db, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func crashChild(db string, paths []string) int {
	s, err := OpenSQLite(context.Background(), db)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	in := bufio.NewReader(os.Stdin)
	for _, p := range paths {
		if p == "--" {
			continue
		}
		// one byte of standard input lets one import start
		if _, err := in.ReadByte(); err != nil {
			return 1
		}
		a, err := s.Add(context.Background(), p, AddOptions{Replan: plan.RecordedEntries})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("run %d %s\n", a.Run, p)
	}
	return 0
}

// TestHistoryKill9: an importer of 50 files killed with SIGKILL part way
// leaves a database that opens and holds whole files only (every run has
// all its samples); importing again completes without duplicates.
func TestHistoryKill9(t *testing.T) {
	paths := writeRuns(t, synth.Options{Runs: 50, Seed: 5})
	db := filepath.Join(t.TempDir(), "history.db")
	cmd := exec.Command(os.Args[0], append([]string{"--"}, paths...)...)
	cmd.Env = append(os.Environ(), crashChildEnv+"="+db)
	cmd.Stderr = os.Stderr
	// 11 imports may start: the kill after the 10th line lands in the
	// 11th (or just after it), however loaded the machine. The pipe stays
	// open: the child waits there, never exits by itself.
	in, inErr := cmd.StdinPipe()
	out, outErr := cmd.StdoutPipe()
	if err := errors.Join(inErr, outErr); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, err := in.Write([]byte(strings.Repeat("g", 11))); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for n := 0; n < 10 && sc.Scan(); n++ {
	}
	// the 11th import is under way: verification, or its transaction.
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()

	s, err := OpenSQLite(testCtx(t), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var check string
	if err := s.db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q, %v", check, err)
	}
	wholeOnly(t, s)
	before, _ := s.Runs(testCtx(t))
	if len(before) < 10 || len(before) > 11 {
		t.Fatalf("%d runs after the kill: want 10 or 11", len(before))
	}
	added, already := addAll(t, s, paths, "")
	if already != len(before) || added+already != 50 {
		t.Fatalf("re-import: %d added, %d already (of %d before)", added, already, len(before))
	}
	wholeOnly(t, s)
	if after, _ := s.Runs(testCtx(t)); len(after) != 50 {
		t.Fatalf("%d runs after the re-import", len(after))
	}
}

// wholeOnly fails unless every run holds as many samples as its file.
func wholeOnly(t *testing.T, s *Store) {
	t.Helper()
	rows, err := s.db.Query(`SELECT r.id, r.samples, (SELECT COUNT(*) FROM samples x WHERE x.run_id = r.id) FROM runs r`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, want, got int
		if err := rows.Scan(&id, &want, &got); err != nil {
			t.Fatal(err)
		}
		if got != want || want != 6 {
			t.Fatalf("run %d holds %d samples of %d", id, got, want)
		}
	}
}

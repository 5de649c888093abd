package result

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSecondWriterRefused: a writer in another process (this test binary
// re-executed) holds a results file mid-run; a second writer, by Create
// with force or by Resume, is refused with the holder's PID, and the file
// is byte for byte what the first writer wrote. Once the first writer is
// killed (kill -9: the kernel drops the lock), Resume works.
func TestSecondWriterRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$")
	cmd.Env = append(os.Environ(), "BENCHRIG_RESULT_WRITER="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "writing\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	holder := strconv.Itoa(cmd.Process.Pid)

	for name, second := range map[string]func() error{
		"create --force": func() error {
			w, err := Create(path, testHeader("x#1"), true)
			if err == nil {
				w.Abandon()
			}
			return err
		},
		"create": func() error { _, err := Create(path, testHeader("x#1"), false); return err },
		"resume": func() error {
			w, _, err := Resume(path)
			if err == nil {
				w.Abandon()
			}
			return err
		},
	} {
		err := second()
		if name == "create" {
			if err == nil || !strings.Contains(err.Error(), "already exists") {
				t.Errorf("%s: %v, want already exists", name, err)
			}
			continue
		}
		var le *LockedError
		if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
			t.Fatalf("%s: %v; want a LockedError", name, err)
		}
		if !strings.Contains(err.Error(), "process "+holder) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %q does not name the file and holder %s", name, err, holder)
		}
	}
	after, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the refused writers changed the file (%v):\nbefore %q\nafter  %q", err, before, after)
	}

	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	w, hdr, err := Resume(path)
	if err != nil {
		t.Fatalf("Resume after the holder died: %v", err)
	}
	if !w.Done("a#1") || len(hdr.Plan) != 2 {
		t.Errorf("resumed: a#1 done %v, plan %v", w.Done("a#1"), hdr.Plan)
	}
	if err := w.Append(testSample("b#1")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(false); err != nil {
		t.Fatal(err)
	}
	if r, err := Verify(path, nil); err != nil || !r.OK() {
		t.Errorf("Verify after resume: %+v, %v", r, err)
	}
}

// TestHelperWriter is the first writer of TestSecondWriterRefused.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv("BENCHRIG_RESULT_WRITER")
	if path == "" {
		t.Skip("helper process")
	}
	w, err := Create(path, testHeader("a#1", "b#1"), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(testSample("a#1")); err != nil {
		t.Fatal(err)
	}
	fmt.Println("writing")
	time.Sleep(60 * time.Second) // killed by the parent long before
}

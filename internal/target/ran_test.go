package target

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fileSHA256 hashes a file for the test's expectations.
func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// copyFile copies src to dst with mode, plus extra bytes at the end (a
// "rebuilt" binary: an ELF file runs the same with bytes appended).
func copyFile(t *testing.T, src, dst string, extra string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp := dst + ".new"
	if err := os.WriteFile(tmp, append(b, extra...), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil { // a new inode, as a build writes
		t.Fatal(err)
	}
}

// TestRanBehindWrappers: what a target runs is read from its tree, not
// from the command it names: through a wrapper that execs the server, the
// server's bytes; through one that keeps running, the shell, the wrapper
// script and the server; a server replaced on disk while it runs is read
// as it runs (the old bytes, its path marked deleted), and a new start
// reads the new one.
func TestRanBehindWrappers(t *testing.T) {
	need(t, "sh")
	sleep := need(t, "sleep")
	dir := t.TempDir()
	server := filepath.Join(dir, "server")
	copyFile(t, sleep, server, "")
	oldSum := fileSHA256(t, server)
	execWrap := filepath.Join(dir, "exec-wrap.sh")
	bgWrap := filepath.Join(dir, "bg-wrap.sh")
	os.WriteFile(execWrap, []byte("#!/bin/sh\nexec "+server+" 30\n"), 0o755)
	os.WriteFile(bgWrap, []byte("#!/bin/sh\n"+server+" 30 &\nwait\n"), 0o755)

	ran := func(p *Process) map[File]bool {
		t.Helper()
		// the wrapper's exec, or its child's start, may lag the start
		var files []File
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			var err error
			if files, err = p.Ran(); err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				if f.Kind == FileExe && filepath.Base(f.Path) == "server" || filepath.Base(f.Path) == "server (deleted)" {
					goto found
				}
			}
		}
	found:
		m := map[File]bool{}
		for _, f := range files {
			m[f] = true
		}
		return m
	}

	p := startT(t, testSpec(t, "exec-wrap", execWrap), nil)
	got := ran(p)
	if !got[File{Path: server, SHA256: oldSum, Kind: FileExe}] || len(got) != 1 {
		t.Errorf("behind an exec wrapper: %v; want the server alone", got)
	}

	q := startT(t, testSpec(t, "bg-wrap", bgWrap), nil)
	got = ran(q)
	if !got[File{Path: server, SHA256: oldSum, Kind: FileExe}] || !got[File{Path: bgWrap, SHA256: fileSHA256(t, bgWrap), Kind: FileScript}] || len(got) != 3 {
		t.Errorf("behind a shell that waits: %v; want the shell, its script and the server", got)
	}

	// Rebuilt while it runs: the running one is still the old bytes.
	copyFile(t, sleep, server, "rebuilt")
	newSum := fileSHA256(t, server)
	got = ran(p)
	if !got[File{Path: server + " (deleted)", SHA256: oldSum, Kind: FileExe}] {
		t.Errorf("replaced while it runs: %v; want the old bytes, marked deleted", got)
	}
	r := startT(t, testSpec(t, "exec-wrap-2", execWrap), nil)
	if got = ran(r); !got[File{Path: server, SHA256: newSum, Kind: FileExe}] {
		t.Errorf("started after the rebuild: %v; want the new bytes %s", got, newSum)
	}
	_ = p.Stop(context.Background())
}

// TestHashCache: a file is hashed once while its device, inode, size and
// mtime stay the same (bytes changed in place under the same size and
// mtime are not seen: that is the key's bargain), and again once any of
// them changes.
func TestHashCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runtime")
	os.WriteFile(path, []byte("version one"), 0o644)
	mtime := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(path, mtime, mtime)
	first, err := hashFile(path, 0)
	if err != nil || first != fileSHA256(t, path) {
		t.Fatalf("hash %q, %v", first, err)
	}
	f, _ := os.OpenFile(path, os.O_WRONLY, 0)
	f.WriteAt([]byte("version two"), 0)
	f.Close()
	os.Chtimes(path, mtime, mtime)
	if again, _ := hashFile(path, 0); again != first {
		t.Errorf("hashed again although device, inode, size and mtime are the same")
	}
	os.Chtimes(path, mtime.Add(time.Second), mtime.Add(time.Second))
	if changed, _ := hashFile(path, 0); changed == first || changed != fileSHA256(t, path) {
		t.Errorf("not hashed again after the mtime changed")
	}
	if _, err := hashFile(path, 4); err == nil {
		t.Errorf("a file beyond the bound was hashed")
	}
}

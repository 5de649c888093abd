package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// statLine builds a /proc/PID/stat line with the fields this package reads.
func procStatLine(pid int, comm string, state byte, ppid, pgrp int, start uint64) string {
	return fmt.Sprintf("%d (%s) %c %d %d %d 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 %d 1000000 200 18446744073709551615\n",
		pid, comm, state, ppid, pgrp, pgrp, start)
}

// fakeProc is a fixture process filesystem.
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T) *fakeProc { return &fakeProc{t: t, root: t.TempDir()} }

func (f *fakeProc) write(rel, content string) {
	f.t.Helper()
	path := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeProc) proc(pid int, comm string, state byte, ppid, pgrp int) {
	f.write(fmt.Sprintf("%d/stat", pid), procStatLine(pid, comm, state, ppid, pgrp, uint64(1000+pid)))
}

func (f *fakeProc) fd(pid, fd int, target string) {
	f.t.Helper()
	dir := filepath.Join(f.root, fmt.Sprint(pid), "fd")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, fmt.Sprint(fd))); err != nil {
		f.t.Fatal(err)
	}
}

const tcpHeader = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

// TestListenerPIDShared covers sockets shared by a master and its forked
// workers, and sockets nobody visible holds, on a fixture built per test.
func TestListenerPIDShared(t *testing.T) {
	f := newFakeProc(t)
	fs, err := NewFS(f.root)
	if err != nil {
		t.Fatal(err)
	}
	// 127.0.0.1:3000 listening (inode 111); 0.0.0.0:3000 established (not
	// a listener); 0.0.0.0:5432 listening (inode 222); 0.0.0.0:8080
	// listening (inode 444) but held by no visible process.
	f.write("net/tcp", tcpHeader+
		"   0: 0100007F:0BB8 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0000000000000000 100 0 0 10 0\n"+
		"   1: 00000000:0BB8 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 999 1 0000000000000000 100 0 0 10 0\n"+
		"   2: 00000000:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   26        0 222 1 0000000000000000 100 0 0 10 0\n"+
		"   3: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000    0        0 444 1 0000000000000000 100 0 0 10 0\n")
	// [::]:6379 listening (inode 333).
	f.write("net/tcp6", tcpHeader+
		"   0: 00000000000000000000000000000000:18EB 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 333 1 0000000000000000 100 0 0 10 0\n")
	f.proc(50, "node", 'S', 1, 50)
	f.fd(50, 0, "/dev/null")
	f.fd(50, 21, "socket:[111]")
	// postgres master 60 and a forked backend 61 share the socket.
	f.proc(60, "postgres", 'S', 1, 60)
	f.proc(61, "postgres", 'S', 60, 60)
	f.fd(61, 5, "socket:[222]")
	f.fd(60, 5, "socket:[222]")
	f.proc(70, "redis-server", 'S', 1, 70)
	f.fd(70, 6, "socket:[333]")

	for port, want := range map[int]int{3000: 50, 5432: 60, 6379: 70} {
		got, err := fs.ListenerPID(port)
		if err != nil || got != want {
			t.Errorf("ListenerPID(%d) = %d, %v; want %d", port, got, err, want)
		}
	}
	for port, want := range map[int]string{
		0:     "want a TCP port 1-65535",
		70000: "want a TCP port 1-65535",
		4000:  "port 4000: nothing listens on it",
		8080:  "port 8080: a socket listens on it but no visible process holds it",
	} {
		_, err := fs.ListenerPID(port)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ListenerPID(%d) = %v, want %q", port, err, want)
		}
	}
}

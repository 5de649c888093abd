package evloop

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestSysRW: the loops' own read and write system calls give what read(2)
// and write(2) give: the bytes, their count, and the error numbers of an
// empty socket, a zero-length buffer and a closed descriptor.
func TestSysRW(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	if n, errno := sysRW(unix.SYS_WRITE, fds[0], []byte("hello, loop")); n != 11 || errno != 0 {
		t.Fatalf("write: %d, %v; want 11, 0", n, errno)
	}
	buf := make([]byte, 64)
	if n, errno := sysRW(unix.SYS_READ, fds[1], buf[:5]); n != 5 || errno != 0 || string(buf[:5]) != "hello" {
		t.Fatalf("read of 5: %d %q, %v", n, buf[:n], errno)
	}
	if n, errno := sysRW(unix.SYS_READ, fds[1], buf); n != 6 || errno != 0 || string(buf[:6]) != ", loop" {
		t.Fatalf("read of the rest: %d %q, %v", n, buf[:max(n, 0)], errno)
	}
	if n, errno := sysRW(unix.SYS_READ, fds[1], buf); n != -1 || errno != unix.EAGAIN {
		t.Errorf("read of an empty socket: %d, %v; want -1, EAGAIN", n, errno)
	}
	if n, errno := sysRW(unix.SYS_READ, fds[1], nil); n != 0 || errno != 0 {
		t.Errorf("read into no buffer: %d, %v; want 0, 0", n, errno)
	}
	unix.Close(fds[0])
	if n, errno := sysRW(unix.SYS_WRITE, fds[0], []byte("x")); n != -1 || errno != unix.EBADF {
		t.Errorf("write to a closed descriptor: %d, %v; want -1, EBADF", n, errno)
	}
	if n, err := ReadNonblock(fds[0], buf); n != 0 || err != unix.EBADF {
		t.Errorf("ReadNonblock of a closed descriptor: %d, %v; want 0, EBADF", n, err)
	}
}

// TestEpollPwait: the loops' own epoll_pwait returns the ready events with
// their tags, none for a poll with nothing ready, and EBADF for a closed
// epoll set.
func TestEpollPwait(t *testing.T) {
	p, fds := pollerWithPair(t, 1, 5, 2)
	events := make([]unix.EpollEvent, 4)
	if n, errno := RawEpollWait(p.epfd, events, 0); n != 0 || errno != 0 {
		t.Fatalf("poll with nothing ready: %d, %v", n, errno)
	}
	if _, err := WriteNonblock(fds[0], []byte("x")); err != nil {
		t.Fatal(err)
	}
	if n, errno := RawEpollWait(p.epfd, events, 1000); n != 1 || errno != 0 || events[0].Fd != 5 || events[0].Pad != 2 {
		t.Fatalf("wait with a byte sent: %d %+v, %v; want 1 event tagged 5, 2", n, events[0], errno)
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(epfd)
	if n, errno := RawEpollWait(epfd, events, 0); n != -1 || errno != unix.EBADF {
		t.Errorf("wait on a closed epoll set: %d, %v; want -1, EBADF", n, errno)
	}
}

// BenchmarkRawRead is a read of an empty non-blocking pipe (EAGAIN) made
// by sysRW and by unix.RawSyscall, interleaved three times: what the
// loops' own system call saves (rawsys_linux.go).
//
//	go test -bench RawRead -run '^$' ./internal/driver/evloop/
func BenchmarkRawRead(b *testing.B) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		b.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	buf := make([]byte, 64)
	for range 3 {
		b.Run("sysRW", func(b *testing.B) {
			for b.Loop() {
				if _, errno := sysRW(unix.SYS_READ, p[0], buf); errno != unix.EAGAIN {
					b.Fatal(errno)
				}
			}
		})
		b.Run("unix.RawSyscall", func(b *testing.B) {
			for b.Loop() {
				if _, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(p[0]), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))); errno != unix.EAGAIN {
					b.Fatal(errno)
				}
			}
		})
	}
}

//go:build linux && !amd64

package evloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// sysRW is rawsys_linux_amd64.s's, made with unix.RawSyscall where there
// is no assembly of ours (rawsys_linux.go).
func sysRW(trap uintptr, fd int, b []byte) (int, unix.Errno) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	for {
		n, _, errno := unix.RawSyscall(trap, uintptr(fd), uintptr(p), uintptr(len(b)))
		if errno != unix.EINTR {
			return int(n), errno
		}
	}
}

// epollPwait is rawsys_linux_amd64.s's, made with unix.RawSyscall6.
func epollPwait(epfd int, events []unix.EpollEvent, ms int) (int, unix.Errno) {
	r, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd),
		uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(ms), 0, 0)
	return int(r), errno
}

package evloop

import "golang.org/x/sys/unix"

// sysRW is read(2) or write(2) (trap) of b on fd, the runtime not told
// (rawsys_linux_amd64.s; see rawsys_linux.go), made again when a signal
// interrupted it: errno is never EINTR.
//
//go:noescape
func sysRW(trap uintptr, fd int, b []byte) (n int, errno unix.Errno)

// epollPwait is epoll_pwait(2) of epfd into events for up to ms
// milliseconds, without a signal mask, the runtime not told.
//
//go:noescape
func epollPwait(epfd int, events []unix.EpollEvent, ms int) (n int, errno unix.Errno)

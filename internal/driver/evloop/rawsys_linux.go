package evloop

import "golang.org/x/sys/unix"

// The loops' reads, writes and epoll waits are raw system calls (the
// runtime is not told of them; see WriteNonblock and RawEpollWait), made by
// sysRW and epollPwait: on amd64 a SYSCALL instruction in a frame of their
// own (rawsys_linux_amd64.s), elsewhere unix.RawSyscall.
//
// Why not unix.RawSyscall everywhere: it reaches the SYSCALL instruction
// through four calls (unix.RawSyscall, syscall.RawSyscall's ABI wrapper,
// syscall.RawSyscall6, the runtime's Syscall6), and where the kernel
// clears the CPU's return-address predictions on its way back to user
// space (a mitigation of Spectre-class attacks; a virtual machine's exit),
// every one of those returns is mispredicted. Measured on the 2-core VM of
// bench/results, getpid in a loop: 1,130–1,190 ns a call through
// unix.RawSyscall, 980–1,020 ns through one frame of assembly. A closed
// loop makes two or three such calls per request.

// RawEpollWait is epoll_wait of epfd into events (at least one) for up to
// ms milliseconds (0: a poll; -1: no limit) as a raw system call: the
// runtime is not told, so a wait that blocks keeps the thread's P.
func RawEpollWait(epfd int, events []unix.EpollEvent, ms int) (int, unix.Errno) {
	return epollPwait(epfd, events, ms)
}

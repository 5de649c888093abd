package evloop

import "golang.org/x/sys/unix"

// The loops' reads, writes and epoll waits are raw system calls (the
// runtime is not told of them; see WriteNonblock and RawEpollWait), made by
// sysRW and epollPwait: on amd64 a SYSCALL instruction in a frame of their
// own (rawsys_linux_amd64.s), elsewhere unix.RawSyscall.
//
// Why not unix.RawSyscall everywhere: it reaches the SYSCALL instruction
// through four calls in three packages (unix.RawSyscall, syscall's ABI
// wrapper, syscall.RawSyscall6, the runtime's Syscall6), and on the 2-core
// VM of bench/results (kernel page-table isolation, a CPU without PCID)
// a system call made that way costs more than one made from a frame of
// assembly: a read of an empty pipe took 1,285–1,496 ns through
// unix.RawSyscall against 1,211–1,220 through sysRW (BenchmarkRawRead, 3
// interleaved rounds; getpid the same way: 1,050–1,190 against 970–1,020
// ns). Three nested calls of our own, in one code page, around the
// assembly cost nothing measurable, so it is not the calls themselves;
// what the kernel's return path does to the caches of the code beyond was
// not established. A closed loop makes two or three such calls per
// request.

// RawEpollWait is epoll_wait of epfd into events (at least one) for up to
// ms milliseconds (0: a poll; -1: no limit) as a raw system call: the
// runtime is not told, so a wait that blocks keeps the thread's P.
func RawEpollWait(epfd int, events []unix.EpollEvent, ms int) (int, unix.Errno) {
	return epollPwait(epfd, events, ms)
}

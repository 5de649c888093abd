#include "textflag.h"

#define SYS_epoll_pwait 281

// func sysRW(trap uintptr, fd int, b []byte) (n int, errno unix.Errno)
//
// read(2) or write(2) of b on fd, made here in one frame (see
// rawsys_linux.go for why), and made again when a signal interrupted it.
TEXT ·sysRW(SB),NOSPLIT,$0-56
again:
	MOVQ	fd+8(FP), DI
	MOVQ	b_base+16(FP), SI
	MOVQ	b_len+24(FP), DX
	MOVQ	trap+0(FP), AX
	SYSCALL
	CMPQ	AX, $-4 // EINTR
	JEQ	again
	CMPQ	AX, $0xfffffffffffff001
	JLS	okrw
	MOVQ	$-1, n+40(FP)
	NEGQ	AX
	MOVQ	AX, errno+48(FP)
	RET
okrw:
	MOVQ	AX, n+40(FP)
	MOVQ	$0, errno+48(FP)
	RET

// func epollPwait(epfd int, events []unix.EpollEvent, ms int) (n int, errno unix.Errno)
//
// epoll_pwait(2) of epfd into events, without a signal mask.
TEXT ·epollPwait(SB),NOSPLIT,$0-56
	MOVQ	epfd+0(FP), DI
	MOVQ	events_base+8(FP), SI
	MOVQ	events_len+16(FP), DX
	MOVQ	ms+32(FP), R10
	MOVQ	$0, R8
	MOVQ	$0, R9
	MOVQ	$SYS_epoll_pwait, AX
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JLS	okep
	MOVQ	$-1, n+40(FP)
	NEGQ	AX
	MOVQ	AX, errno+48(FP)
	RET
okep:
	MOVQ	AX, n+40(FP)
	MOVQ	$0, errno+48(FP)
	RET

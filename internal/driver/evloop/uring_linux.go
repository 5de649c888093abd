package evloop

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ring is an io_uring instance as a closed loop uses it (ringloop_linux.go):
// one multishot recv per connection into a ring of provided buffers, sends
// whose successes post nothing, a multishot poll of the loop's epoll set
// (the wake-up eventfd, timers, the connections not on the ring), and one
// io_uring_enter per pass that submits all of it and waits. It is made by
// the Run's thread and used by it alone (SINGLE_ISSUER, DEFER_TASKRUN: the
// completions' kernel work runs in that io_uring_enter, never as an
// interrupt of the thread), and closed at the Run's end.
//
// The layouts and constants are <linux/io_uring.h>'s (Linux 6.1 has every
// one used here).
type ring struct {
	fd int

	sqMem, cqMem, sqeMem, bufMem []byte // the mappings, unmapped by close
	sqHead, sqTail, sqFlags      *uint32
	sqMask                       uint32
	sqes                         []sqe
	cqHead, cqTail               *uint32
	cqMask                       uint32
	cqes                         []cqe
	tail                         uint32 // the SQ tail as queued, stored at submit
	queued                       uint32 // SQEs queued since the last enter

	// the provided buffers: bufs cut in buffers of bufSize bytes, whose
	// entries are in bring (the kernel's, mapped at bufMem), added back as
	// they are handled
	bring     []ringBuf
	bufs      []byte
	btail     uint16
	bmask     uint16
	bufSize   int
	getevents getEventsArg
	ts        unix.Timespec
	// minTimeout: the kernel can wait a while for more than one
	// completion, then settle for one (IORING_FEAT_MIN_TIMEOUT, Linux
	// 6.13); minWant and minWait are the next wait's (Poller.Coalesce)
	minTimeout bool
	minWant    int
	minWait    uint32 // µs
}

// sqe is struct io_uring_sqe (64 bytes).
type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32
	userData    uint64
	bufGroup    uint16
	personality uint16
	spliceFdIn  int32
	addr3       uint64
	_           uint64
}

// cqe is struct io_uring_cqe (16 bytes).
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// ringBuf is struct io_uring_buf; the ring's tail is the first entry's
// resv field.
type ringBuf struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16
}

// uringParams is struct io_uring_params.
type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  [10]uint32 // head tail ring_mask ring_entries flags dropped array resv1 user_addr(2)
	cqOff                                                                  [10]uint32 // head tail ring_mask ring_entries overflow cqes flags resv1 user_addr(2)
}

// getEventsArg is struct io_uring_getevents_arg.
type getEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWait   uint32
	ts        uint64
}

// bufReg is struct io_uring_buf_reg.
type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	_           [3]uint64
}

// syncCancel is struct io_uring_sync_cancel_reg.
type syncCancel struct {
	addr    uint64
	fd      int32
	flags   uint32
	timeout unix.Timespec
	opcode  uint8
	_       [7]uint8
	_       [3]uint64
}

const (
	setupCQSize        = 1 << 3
	setupSubmitAll     = 1 << 7
	setupSingleIssuer  = 1 << 12
	setupDeferTaskrun  = 1 << 13
	featSingleMmap     = 1 << 0
	featNodrop         = 1 << 1
	featExtArg         = 1 << 8
	featMinTimeout     = 1 << 15
	enterGetEvents     = 1 << 0
	enterExtArg        = 1 << 3
	offSQRing          = 0
	offCQRing          = 0x8000000
	offSQEs            = 0x10000000
	opPollAdd          = 6
	opSend             = 26
	opRecv             = 27
	sqeBufferSelect    = 1 << 5
	sqeCQESkipSuccess  = 1 << 6
	recvMultishot      = 1 << 1
	pollAddMulti       = 1 << 0
	cqeFMore           = 1 << 1
	cqeBufferShift     = 16
	registerPbufRing   = 22
	registerSyncCancel = 24
	cancelFlagAll      = 1 << 0
	cancelFlagFD       = 1 << 1
	cancelFlagAny      = 1 << 2
	bufGroup           = 1
	pbufRingMmap       = 1 // IOU_PBUF_RING_MMAP
	offPbufRing        = 0x80000000
	offPbufShift       = 16
)

// errNoRing says the kernel refused what the ring needs (io_uring off by
// sysctl or seccomp, a kernel before 6.1); the loop stays on epoll.
var errNoRing = errors.New("io_uring unavailable")

// newRing makes a ring of at least entries submission slots, with bufs
// as nbuf provided buffers (nbuf a power of two ≤ 32768). bufs is the
// caller's, which keeps it for as long as anything may hold a slice of it
// (the kernel writes into it until the ring is closed).
func newRing(entries int, bufs []byte, nbuf int) (*ring, error) {
	// A ring made just after others were closed has been seen to refuse
	// its buffer ring as already registered (EEXIST, Linux 6.18, a few
	// rings in a thousand made by the tests): a new ring then takes it.
	for try := 0; ; try++ {
		r, err := makeRing(entries, bufs, nbuf)
		if err == nil || !errors.Is(err, unix.EEXIST) || try == 4 {
			return r, err
		}
	}
}

func makeRing(entries int, bufs []byte, nbuf int) (*ring, error) {
	r := &ring{fd: -1}
	p := uringParams{flags: setupCQSize | setupSubmitAll | setupSingleIssuer | setupDeferTaskrun, cqEntries: uint32(4 * entries)}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, fmt.Errorf("%w: io_uring_setup: %w", errNoRing, errno)
	}
	r.fd = int(fd)
	if p.features&(featSingleMmap|featNodrop|featExtArg) != featSingleMmap|featNodrop|featExtArg {
		r.close()
		return nil, fmt.Errorf("%w: the kernel lacks a feature (features %#x)", errNoRing, p.features)
	}
	ringSize := max(int(p.sqOff[6])+4*int(p.sqEntries), int(p.cqOff[5])+16*int(p.cqEntries))
	mem, err := unix.Mmap(r.fd, offSQRing, ringSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("%w: mmap the rings: %v", errNoRing, err)
	}
	r.sqMem, r.cqMem = mem, mem
	if r.sqeMem, err = unix.Mmap(r.fd, offSQEs, 64*int(p.sqEntries), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.close()
		return nil, fmt.Errorf("%w: mmap the SQEs: %v", errNoRing, err)
	}
	at := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
	r.sqHead, r.sqTail, r.sqFlags, r.sqMask = at(p.sqOff[0]), at(p.sqOff[1]), at(p.sqOff[4]), *at(p.sqOff[2])
	array := unsafe.Slice(at(p.sqOff[6]), p.sqEntries)
	for i := range array {
		array[i] = uint32(i) // slot i holds SQE i, once and for all
	}
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqHead, r.cqTail, r.cqMask = at(p.cqOff[0]), at(p.cqOff[1]), *at(p.cqOff[2])
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&mem[p.cqOff[5]])), p.cqEntries)
	r.tail = atomic.LoadUint32(r.sqTail)
	r.minTimeout = p.features&featMinTimeout != 0

	// the provided buffers: bufs, cut in nbuf, and the ring of their
	// entries, which the kernel allocates (IOU_PBUF_RING_MMAP) and the
	// ring's descriptor maps: a ring of entries in memory of ours would
	// have its pages pinned, and registering one at an address a ring
	// closed a moment before had pinned can fail (EEXIST, Linux 6.18)
	r.bufSize = len(bufs) / nbuf
	r.bufs = bufs
	reg := bufReg{ringEntries: uint32(nbuf), bgid: bufGroup, flags: pbufRingMmap}
	if _, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0); errno != 0 {
		r.close()
		return nil, fmt.Errorf("%w: register the buffer ring: %w", errNoRing, errno)
	}
	if r.bufMem, err = unix.Mmap(r.fd, offPbufRing|bufGroup<<offPbufShift, (16*nbuf+4095)&^4095, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.close()
		return nil, fmt.Errorf("%w: mmap the buffer ring: %v", errNoRing, err)
	}
	r.bring = unsafe.Slice((*ringBuf)(unsafe.Pointer(&r.bufMem[0])), nbuf)
	r.bmask = uint16(nbuf - 1)
	for b := 0; b < nbuf; b++ {
		r.putBuf(uint16(b))
	}
	r.publishBufs()
	return r, nil
}

// close unmaps the ring and closes it; the kernel cancels what is left.
func (r *ring) close() {
	for _, m := range [][]byte{r.sqMem, r.sqeMem, r.bufMem} {
		if m != nil {
			_ = unix.Munmap(m)
		}
	}
	r.sqMem, r.cqMem, r.sqeMem, r.bufMem = nil, nil, nil, nil
	if r.fd >= 0 {
		_ = unix.Close(r.fd)
		r.fd = -1
	}
}

// get returns the next free SQE, zeroed, submitting what is queued first
// when the queue is full.
func (r *ring) get() (*sqe, error) {
	if r.tail-atomic.LoadUint32(r.sqHead) >= uint32(len(r.sqes)) {
		if err := r.enter(0, -1, false); err != nil {
			return nil, err
		}
	}
	s := &r.sqes[r.tail&r.sqMask]
	*s = sqe{}
	r.tail++
	r.queued++
	return s, nil
}

// recv queues a multishot recv of fd into the provided buffers.
func (r *ring) recv(fd int, userData uint64) error {
	s, err := r.get()
	if err != nil {
		return err
	}
	s.opcode, s.fd, s.flags, s.ioprio, s.bufGroup, s.userData = opRecv, int32(fd), sqeBufferSelect, recvMultishot, bufGroup, userData
	return nil
}

// send queues a send of b on fd, all of it (MSG_WAITALL), posting a
// completion only when it fails when quiet, else always. b must stay as it
// is until the request is answered.
func (r *ring) send(fd int, b []byte, userData uint64, quiet bool) error {
	s, err := r.get()
	if err != nil {
		return err
	}
	s.opcode, s.fd, s.userData = opSend, int32(fd), userData
	if quiet {
		s.flags = sqeCQESkipSuccess
	}
	s.addr, s.len, s.opFlags = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint32(len(b)), unix.MSG_WAITALL|unix.MSG_NOSIGNAL
	return nil
}

// pollIn queues a multishot poll of fd for input.
func (r *ring) pollIn(fd int, userData uint64) error {
	s, err := r.get()
	if err != nil {
		return err
	}
	s.opcode, s.fd, s.len, s.opFlags, s.userData = opPollAdd, int32(fd), pollAddMulti, unix.POLLIN, userData
	return nil
}

// cancelFd cancels every request on fd now (a socket about to be closed:
// a request holds its file, and the peer would see no FIN until it ends).
func (r *ring) cancelFd(fd int) error {
	if err := r.enter(0, -1, false); err != nil { // what names fd must be in first
		return err
	}
	c := syncCancel{fd: int32(fd), flags: cancelFlagFD | cancelFlagAll, timeout: unix.Timespec{Sec: -1, Nsec: -1}}
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerSyncCancel, uintptr(unsafe.Pointer(&c)), 1, 0, 0)
	if errno != 0 && errno != unix.ENOENT {
		return fmt.Errorf("io_uring cancel: %w", errno)
	}
	// the cancelled requests let go of the file when their completions
	// run, deferred to an io_uring_enter that gets events
	return r.enter(0, 0, true)
}

// cancelAll cancels every request in flight, then runs the kernel's part
// of their completions, which are then in the completion queue.
func (r *ring) cancelAll() error {
	if err := r.enter(0, -1, false); err != nil {
		return err
	}
	c := syncCancel{flags: cancelFlagAny | cancelFlagAll, timeout: unix.Timespec{Sec: -1, Nsec: -1}}
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerSyncCancel, uintptr(unsafe.Pointer(&c)), 1, 0, 0)
	if errno != 0 && errno != unix.ENOENT {
		return fmt.Errorf("io_uring cancel: %w", errno)
	}
	return r.enter(0, -1, true)
}

// enter submits what is queued and, when wait, waits up to ms milliseconds
// (-1: no limit, 0: not at all) for a completion, running the completions'
// deferred kernel work either way when wait. An interrupted or timed-out
// wait is no error. It is a raw system call: a wait keeps the thread's P
// (see the package comment on blocking in the kernel).
func (r *ring) enter(min int, ms int, wait bool) error {
	atomic.StoreUint32(r.sqTail, r.tail)
	flags, arg, argSz := uintptr(0), uintptr(0), uintptr(0)
	if wait {
		flags = enterGetEvents
		coalesce := r.minWait > 0 && min == 1 && ms != 0
		if ms >= 0 || coalesce {
			r.getevents = getEventsArg{}
			if ms >= 0 {
				r.ts = unix.NsecToTimespec(int64(ms) * 1e6)
				r.getevents.ts = uint64(uintptr(unsafe.Pointer(&r.ts)))
			}
			if coalesce { // wait up to minWait for minWant, then for one
				min, r.getevents.minWait = r.minWant, r.minWait
			}
			flags |= enterExtArg
			arg, argSz = uintptr(unsafe.Pointer(&r.getevents)), unsafe.Sizeof(r.getevents)
		}
		if ms == 0 {
			min = 0
		}
	} else {
		min = 0
	}
	n := r.queued
	if n == 0 && !wait {
		return nil
	}
	_, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), uintptr(min), flags, arg, argSz)
	switch errno {
	case 0, unix.EINTR, unix.ETIME, unix.EAGAIN, unix.EBUSY:
		// EAGAIN/EBUSY: completions overflowed; reaping them makes room
	default:
		return fmt.Errorf("io_uring_enter: %w", errno)
	}
	// every SQE queued is consumed (SUBMIT_ALL), or the call failed as a whole
	r.queued = r.tail - atomic.LoadUint32(r.sqHead)
	return nil
}

// ready returns the completions to handle; done(n) releases n of them.
func (r *ring) ready() (head, tail uint32) {
	return atomic.LoadUint32(r.cqHead), atomic.LoadUint32(r.cqTail)
}

// at is the completion at head.
func (r *ring) at(head uint32) cqe { return r.cqes[head&r.cqMask] }

// done releases the completions before head.
func (r *ring) done(head uint32) { atomic.StoreUint32(r.cqHead, head) }

// buf is the bytes of a recv's completion c (c.res > 0, a buffer picked).
func (r *ring) buf(c cqe) (id uint16, b []byte) {
	id = uint16(c.flags >> cqeBufferShift)
	off := int(id) * r.bufSize
	return id, r.bufs[off : off+int(c.res) : off+int(c.res)]
}

// putBuf gives buffer id back to the kernel at the next publishBufs.
func (r *ring) putBuf(id uint16) {
	e := &r.bring[r.btail&r.bmask]
	off := int(id) * r.bufSize
	e.addr, e.len, e.bid = uint64(uintptr(unsafe.Pointer(&r.bufs[off]))), uint32(r.bufSize), id
	r.btail++
}

// publishBufs makes the buffers put back visible to the kernel: the ring's
// tail (the first entry's resv) stored with release order, by a 32-bit
// atomic store of the word it shares with that entry's bid.
func (r *ring) publishBufs() {
	w := (*uint32)(unsafe.Pointer(&r.bring[0].bid))
	atomic.StoreUint32(w, uint32(r.bring[0].bid)|uint32(r.btail)<<16)
}

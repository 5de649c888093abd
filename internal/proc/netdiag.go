package proc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The listening sockets can also be had from the kernel's socket
// diagnostics (NETLINK_SOCK_DIAG, inet_diag), the way ss -ltn does. Reading
// /proc/net/tcp makes the kernel walk the whole established-socket hash
// table (and the TIME_WAIT entries) whatever it holds, a few milliseconds of
// CPU per file; a sock_diag dump restricted to TCP_LISTEN walks only the
// listening hash. TCPListeners uses it when it reads the real /proc of this
// process and falls back to the files when it fails.
//
// Layouts, from linux/netlink.h, linux/sock_diag.h and linux/inet_diag.h
// (integers in host byte order unless said otherwise):
//
//	nlmsghdr          len u32, type u16, flags u16, seq u32, pid u32      16 bytes
//	inet_diag_req_v2  family u8, protocol u8, ext u8, pad u8, states u32,
//	                  id inet_diag_sockid                                56 bytes
//	inet_diag_sockid  sport be16, dport be16, src [16]byte, dst [16]byte
//	                  (addresses in network byte order), if u32,
//	                  cookie [2]u32                                      48 bytes
//	inet_diag_msg     family u8, state u8, timer u8, retrans u8,
//	                  id inet_diag_sockid, expires u32, rqueue u32,
//	                  wqueue u32, uid u32, inode u32                     72 bytes
const (
	nlmsgHdrLen    = 16
	diagReqLen     = 56
	diagMsgLen     = 72
	tcpStateListen = 10 // TCP_LISTEN

	// diagBufSize is the receive buffer: the kernel fills a dump datagram
	// up to 32 KiB (less when the reader's buffer is smaller); a larger
	// datagram is an error, not a truncated parse.
	diagBufSize = 64 << 10
	// diagMaxBytes, diagMaxRecvs and diagMaxListeners bound one listing
	// (both families): a listening socket takes about 130 bytes of a
	// reply, so they allow several hundred thousand listeners.
	diagMaxBytes     = 64 << 20
	diagMaxRecvs     = 1 << 14
	diagMaxListeners = 1 << 20
	// diagMaxSends bounds the tries of a request a signal interrupts.
	diagMaxSends = 16
	// diagRecvTimeout bounds each receive (SO_RCVTIMEO), diagDeadline the
	// whole listing.
	diagRecvTimeout = 2 * time.Second
	diagDeadline    = 10 * time.Second
)

// diagListings counts the listings TCPListeners took from sock_diag (for
// tests to tell which path served a call).
var diagListings atomic.Uint64

// diagError is an error a sock_diag reply carried (NLMSG_ERROR, or
// NLMSG_DONE with a negative status).
type diagError struct {
	Errno unix.Errno
}

func (e *diagError) Error() string {
	return fmt.Sprintf("sock_diag: the kernel answered errno %d (%v)", int(e.Errno), e.Errno)
}

func (e *diagError) Unwrap() error { return e.Errno }

// usesOwnProc reports whether fs reads the kernel's process filesystem at
// /proc, whose net directory is this process's network namespace: the one
// a sock_diag socket opened here reports on.
func (fs FS) usesOwnProc() bool {
	if filepath.Clean(fs.Root()) != DefaultRoot {
		return false
	}
	var st unix.Statfs_t
	return unix.Statfs(DefaultRoot, &st) == nil && st.Type == unix.PROC_SUPER_MAGIC
}

// diagList is diagTCPListeners (tests replace it to see TCPListeners fall
// back to the files).
var diagList = diagTCPListeners

// diagTCPListeners lists the listening TCP sockets of this process's
// network namespace from two sock_diag dumps (AF_INET, then AF_INET6),
// unsorted.
func diagTCPListeners() ([]Listener, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag: socket: %w", err)
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(diagRecvTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return nil, fmt.Errorf("sock_diag: set receive timeout: %w", err)
	}
	d := &diagDumper{fd: fd, buf: make([]byte, diagBufSize), deadline: time.Now().Add(diagDeadline)}
	return diagBothFamilies(d.dump)
}

// diagBothFamilies runs the AF_INET dump (request 1), then the AF_INET6
// one (request 2), and joins their listeners. An AF_INET6 dump the kernel
// refuses with ENOENT or EAFNOSUPPORT means no IPv6: no listeners.
func diagBothFamilies(dump func(family uint8, seq uint32, out []Listener) ([]Listener, error)) ([]Listener, error) {
	out, err := dump(unix.AF_INET, 1, nil)
	if err != nil {
		return nil, err
	}
	v4 := out[:len(out):len(out)] // the v6 dump appends to a copy
	out, err = dump(unix.AF_INET6, 2, v4)
	if err != nil {
		var de *diagError
		if errors.As(err, &de) && (de.Errno == unix.ENOENT || de.Errno == unix.EAFNOSUPPORT) {
			return v4, nil
		}
		return nil, err
	}
	return out, nil
}

// diagDumper runs sock_diag dumps on one netlink socket, within the bounds
// of one listing.
type diagDumper struct {
	fd       int
	buf      []byte
	deadline time.Time
	recvs    int
	bytes    int
}

// dump asks for the listening TCP sockets of family and appends them to
// out, reading replies to request seq until NLMSG_DONE.
func (d *diagDumper) dump(family uint8, seq uint32, out []Listener) ([]Listener, error) {
	var req [nlmsgHdrLen + diagReqLen]byte
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(req[8:], seq)
	req[16] = family
	req[17] = unix.IPPROTO_TCP
	binary.NativeEndian.PutUint32(req[20:], 1<<tcpStateListen)
	kernel := &unix.SockaddrNetlink{Family: unix.AF_NETLINK}
	for tries := 1; ; tries++ {
		err := unix.Sendto(d.fd, req[:], 0, kernel)
		if err == nil {
			break
		}
		if err != unix.EINTR || tries == diagMaxSends {
			return nil, fmt.Errorf("sock_diag: send request (try %d of %d): %w", tries, diagMaxSends, err)
		}
	}
	for {
		if d.recvs >= diagMaxRecvs {
			return nil, fmt.Errorf("sock_diag: no end of dump after %d receives (the bound)", diagMaxRecvs)
		}
		if time.Now().After(d.deadline) {
			return nil, fmt.Errorf("sock_diag: no end of dump within %v (the bound)", diagDeadline)
		}
		d.recvs++
		// MSG_TRUNC: n is the datagram's whole length even when it is
		// longer than the buffer.
		n, from, err := unix.Recvfrom(d.fd, d.buf, unix.MSG_TRUNC)
		switch {
		case err == unix.EINTR: // a signal (the Go scheduler's SIGURG): again
			continue
		case err == unix.EAGAIN:
			return nil, fmt.Errorf("sock_diag: no reply within %v", diagRecvTimeout)
		case err != nil:
			return nil, fmt.Errorf("sock_diag: receive: %w", err)
		case n > len(d.buf):
			return nil, fmt.Errorf("sock_diag: a reply of %d bytes, over the %d-byte buffer", n, len(d.buf))
		}
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != 0 {
			continue // not from the kernel
		}
		if d.bytes += n; d.bytes > diagMaxBytes {
			return nil, fmt.Errorf("sock_diag: replies over %d bytes (the bound)", diagMaxBytes)
		}
		var done bool
		out, done, err = parseDiagDump(d.buf[:n], seq, out)
		if err != nil {
			return nil, err
		}
		if len(out) > diagMaxListeners {
			return nil, fmt.Errorf("sock_diag: over %d listening sockets (the bound)", diagMaxListeners)
		}
		if done {
			return out, nil
		}
	}
}

// parseDiagDump parses one datagram of the replies to sock_diag dump
// request seq and appends the listening sockets it describes to out (the
// address unmapped, as ParseNetTCP gives it; sockets in another state, or
// of inode 0, are skipped). done reports the end of the dump (NLMSG_DONE).
// Every length is checked against the datagram: a malformed one is an error
// naming what was wrong.
func parseDiagDump(b []byte, seq uint32, out []Listener) (_ []Listener, done bool, err error) {
	for off := 0; off < len(b); {
		rest := b[off:]
		if len(rest) < nlmsgHdrLen {
			return out, false, fmt.Errorf("sock_diag: truncated message header at byte %d: %d bytes, want %d", off, len(rest), nlmsgHdrLen)
		}
		size := binary.NativeEndian.Uint32(rest[0:])
		typ := binary.NativeEndian.Uint16(rest[4:])
		if size < nlmsgHdrLen || uint64(size) > uint64(len(rest)) {
			return out, false, fmt.Errorf("sock_diag: message at byte %d has length %d, want %d to the %d bytes left", off, size, nlmsgHdrLen, len(rest))
		}
		if got := binary.NativeEndian.Uint32(rest[8:]); got != seq {
			return out, false, fmt.Errorf("sock_diag: message at byte %d answers request %d, want %d", off, got, seq)
		}
		body := rest[nlmsgHdrLen:size]
		switch typ {
		case unix.NLMSG_NOOP:
		case unix.NLMSG_DONE:
			// The body is the dump's status: 0, or a negative errno.
			if len(body) >= 4 {
				if st := int32(binary.NativeEndian.Uint32(body)); st < 0 {
					return out, true, &diagError{Errno: unix.Errno(uint32(-int64(st)))}
				}
			}
			return out, true, nil
		case unix.NLMSG_ERROR:
			if len(body) < 4 {
				return out, false, fmt.Errorf("sock_diag: error message at byte %d has %d bytes, want 4 for its errno", off, len(body))
			}
			st := int32(binary.NativeEndian.Uint32(body))
			if st < 0 {
				return out, false, &diagError{Errno: unix.Errno(uint32(-int64(st)))}
			}
			// 0 is an acknowledgement.
		case unix.NLMSG_OVERRUN:
			return out, false, fmt.Errorf("sock_diag: the kernel reports an overrun (message at byte %d)", off)
		case unix.SOCK_DIAG_BY_FAMILY:
			l, ok, err := parseDiagMsg(body)
			if err != nil {
				return out, false, fmt.Errorf("sock_diag: message at byte %d: %w", off, err)
			}
			if ok {
				out = append(out, l)
			}
		default:
			return out, false, fmt.Errorf("sock_diag: message at byte %d has type %d, want %d", off, typ, unix.SOCK_DIAG_BY_FAMILY)
		}
		// Messages start at multiples of 4 (NLMSG_ALIGN); the last one's
		// padding may be missing.
		off += (int(size) + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1)
	}
	return out, false, nil
}

// parseDiagMsg reads an inet_diag_msg (and ignores the attributes after
// it). ok is false for a socket that is not listening or has no inode.
func parseDiagMsg(b []byte) (l Listener, ok bool, err error) {
	if len(b) < diagMsgLen {
		return Listener{}, false, fmt.Errorf("inet_diag_msg of %d bytes, want %d", len(b), diagMsgLen)
	}
	family, state := b[0], b[1]
	port := binary.BigEndian.Uint16(b[4:])
	src := b[8:24]
	inode := binary.NativeEndian.Uint32(b[68:])
	var a netip.Addr
	switch family {
	case unix.AF_INET:
		a = netip.AddrFrom4([4]byte(src[:4]))
	case unix.AF_INET6:
		a = netip.AddrFrom16([16]byte(src)).Unmap()
	default:
		return Listener{}, false, fmt.Errorf("inet_diag_msg of address family %d, want %d or %d", family, unix.AF_INET, unix.AF_INET6)
	}
	if state != tcpStateListen || inode == 0 {
		return Listener{}, false, nil
	}
	return Listener{Addr: netip.AddrPortFrom(a, port), Inode: uint64(inode)}, true, nil
}

package evloop

import (
	"fmt"
	"math"

	"golang.org/x/sys/unix"
)

// TimerTag is the Fd field of the events of a Poller's timer: a loop skips
// them (the wake-up was the point).
const TimerTag = -2

// Arm makes the Poller's timer wake the next Wait at at (driver.Now()
// units), now being the current time; math.MaxInt64 disarms it. The timer
// is a timerfd in the epoll set, made on first use: a wait parked in the
// runtime's poller then wakes when the timer fires, to the microsecond,
// where a deadline on the runtime's poller would wake to the millisecond.
// Re-arming resets its count, so a fired timer is never read. Arming for
// the time already armed costs nothing.
func (p *Poller) Arm(now, at int64) error {
	if at == p.armed {
		return nil
	}
	if p.tfd < 0 {
		if at == math.MaxInt64 {
			return nil
		}
		fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
		if err != nil {
			return fmt.Errorf("timerfd_create: %w", err)
		}
		if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: TimerTag}); err != nil {
			_ = unix.Close(fd)
			return fmt.Errorf("epoll_ctl timerfd: %w", err)
		}
		p.tfd = fd
	}
	var spec unix.ItimerSpec // zero: disarmed
	if at != math.MaxInt64 {
		spec.Value = unix.NsecToTimespec(max(at-now, 1)) // relative; 0 would disarm
	}
	if err := unix.TimerfdSettime(p.tfd, 0, &spec, nil); err != nil {
		return fmt.Errorf("timerfd_settime: %w", err)
	}
	p.armed = at
	return nil
}

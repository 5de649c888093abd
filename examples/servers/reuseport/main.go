// Command reuseport is a multi-process RESP server, the shape of servers
// that answer from several worker processes on one port (SO_REUSEPORT, or
// workers forked by a database server): a parent starts -workers copies of
// itself, each listening on -addr with SO_REUSEPORT and answering the RESP
// commands of internal/resp/resptest (GET, MGET, SET, PING, INFO …). The
// parent prints "listening on ADDR" once every worker listens, and stops
// them when it is told to stop (SIGTERM, SIGINT); a worker whose parent
// dies gets SIGTERM (parent-death signal).
//
//	reuseport -addr 127.0.0.1:6390 -workers 2
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/resp/resptest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6390", "host:port every worker listens on")
	workers := flag.Int("workers", 2, "worker processes (1–64)")
	worker := flag.Bool("worker", false, "run as one worker (the parent starts them)")
	flag.Parse()
	if *workers < 1 || *workers > 64 {
		fmt.Fprintf(os.Stderr, "reuseport: -workers must be 1–64, got %d\n", *workers)
		os.Exit(2)
	}
	if *worker {
		os.Exit(serve(*addr))
	}
	os.Exit(parent(*addr, *workers))
}

// listen opens addr with SO_REUSEPORT, so several processes share the port.
func listen(addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) }); err != nil {
			return err
		}
		return serr
	}}
	return lc.Listen(context.Background(), "tcp", addr)
}

// serve is one worker: it answers until SIGTERM or its parent goes away.
func serve(addr string) int {
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
	ln, err := listen(addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reuseport worker:", err)
		return 1
	}
	srv, err := resptest.StartOn(ln, resptest.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "reuseport worker:", err)
		return 1
	}
	fmt.Println("ready")
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
	srv.Close()
	return 0
}

// parent starts the workers, waits until each listens, and stops them.
func parent(addr string, n int) int {
	var cmds []*exec.Cmd
	stop := func() {
		for _, c := range cmds {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
		for _, c := range cmds {
			_ = c.Wait()
		}
	}
	for i := 0; i < n; i++ {
		c := exec.Command(os.Args[0], "-worker", "-addr", addr)
		c.Stderr = os.Stderr
		out, err := c.StdoutPipe()
		if err != nil {
			fmt.Fprintln(os.Stderr, "reuseport:", err)
			return 1
		}
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "reuseport:", err)
			stop()
			return 1
		}
		cmds = append(cmds, c)
		ready := make(chan bool, 1)
		go func() {
			b := make([]byte, 6)
			k, _ := out.Read(b)
			ready <- string(b[:k]) == "ready\n"
		}()
		select {
		case ok := <-ready:
			if !ok {
				fmt.Fprintln(os.Stderr, "reuseport: a worker did not start")
				stop()
				return 1
			}
		case <-time.After(10 * time.Second):
			fmt.Fprintln(os.Stderr, "reuseport: a worker did not start within 10 s")
			stop()
			return 1
		}
	}
	fmt.Println("listening on", addr)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
	stop()
	return 0
}

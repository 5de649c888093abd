package target

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// tcpListen is the state column value of a listening socket in
// /proc/net/tcp.
const tcpListen = "0A"

// PIDListeningOn returns the PID of the process listening on TCP port (on
// any local address: 127.0.0.1, 0.0.0.0, [::], …), found by reading the
// listening sockets' inodes from /proc/net/tcp and /proc/net/tcp6 and the
// process holding one in /proc/*/fd. When several processes share the socket
// (a master and its forked workers) it returns the one whose parent is not
// among them, the lowest such PID if there are several.
func PIDListeningOn(port int) (int, error) {
	return listenerPID(procRoot, port)
}

// listenerPID is PIDListeningOn reading the process filesystem at root.
func listenerPID(root string, port int) (int, error) {
	if port < 1 || port > 65535 {
		return 0, fmt.Errorf("port %d: want a TCP port 1-65535", port)
	}
	inodes := make(map[string]bool)
	for _, name := range []string{"tcp", "tcp6"} {
		found, err := listeningInodes(filepath.Join(root, "net", name), port)
		if err != nil && !(name == "tcp6" && errors.Is(err, fs.ErrNotExist)) {
			return 0, fmt.Errorf("port %d: %w", port, err)
		}
		for _, ino := range found {
			inodes[ino] = true
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("port %d: nothing listens on it (no listening socket in %s/net/tcp or tcp6)", port, root)
	}

	holders, hidden, err := socketHolders(root, inodes)
	if err != nil {
		return 0, fmt.Errorf("port %d: %w", port, err)
	}
	if len(holders) == 0 {
		msg := fmt.Sprintf("port %d: a socket listens on it but no visible process holds it", port)
		if hidden > 0 {
			msg += fmt.Sprintf(" (%d processes' descriptors were not readable)", hidden)
		}
		return 0, errors.New(msg + "; run benchrig as the server's user or root, or give the PID")
	}
	return rootOf(root, holders), nil
}

// listeningInodes returns the socket inodes of the listening sockets on port
// in one /proc/net/tcp-format file.
func listeningInodes(path string, port int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	first := true
	for sc.Scan() {
		if first { // header
			first = false
			continue
		}
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != tcpListen {
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		p, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil || int(p) != port || fields[9] == "0" {
			continue
		}
		out = append(out, fields[9])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// socketHolders scans root/*/fd for descriptors pointing at one of the
// socket inodes. It returns the PIDs holding one, and how many processes'
// descriptor tables could not be read.
func socketHolders(root string, inodes map[string]bool) (holders []int, hidden int, err error) {
	all, err := pids(root)
	if err != nil {
		return nil, 0, err
	}
	for _, pid := range all {
		dir := filepath.Join(root, strconv.Itoa(pid), "fd")
		ents, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				hidden++
			}
			continue // also: the process has gone meanwhile
		}
		for _, e := range ents {
			link, err := os.Readlink(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			ino, ok := strings.CutPrefix(link, "socket:[")
			if ok && inodes[strings.TrimSuffix(ino, "]")] {
				holders = append(holders, pid)
				break
			}
		}
	}
	return holders, hidden, nil
}

// rootOf picks, among processes sharing a socket, the one whose parent is not
// among them (the master), preferring the lowest PID.
func rootOf(root string, holders []int) int {
	sort.Ints(holders)
	in := make(map[int]bool, len(holders))
	for _, pid := range holders {
		in[pid] = true
	}
	for _, pid := range holders {
		st, err := readStat(root, pid)
		if err != nil || !in[st.PPID] {
			return pid
		}
	}
	return holders[0]
}

package target

import (
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/benchrig/benchrig/internal/proc"
)

// Limits of the hints a readiness failure gives.
const (
	// hintScanLines is how many lines from the end of the log are searched
	// for where the target says it listens.
	hintScanLines = 200
	// hintLines is how many matching log lines are quoted.
	hintLines = 3
	// hintLineBytes cuts each quoted line.
	hintLineBytes = 160
)

// listenLogLine matches log lines that tell where a server listens:
// "listening on :3001", "Server running at http://localhost:8081/",
// "port 5000", "0.0.0.0:9000".
var listenLogLine = regexp.MustCompile(`(?i)listen|\bport\b|:[0-9]{2,5}\b`)

// porter is a probe that waits for one TCP port.
type porter interface{ Port() int }

// Port is the TCP port the probe dials.
func (p TCPProbe) Port() int { return portOf(p.Addr) }

// Port is the TCP port of the probe's URL (80 or 443 when it names none).
func (p HTTPProbe) Port() int {
	u, err := url.Parse(p.URL)
	if err != nil {
		return 0
	}
	if u.Port() != "" {
		return portOf(u.Host)
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}

var (
	_ porter = TCPProbe{}
	_ porter = HTTPProbe{}
)

// portOf returns the port of host:port, or 0.
func portOf(hostPort string) int {
	_, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return 0
	}
	return n
}

// listenHints returns the log lines (the last hintLines of the last
// hintScanLines) that show where the target listened, cut and redacted.
func listenHints(logPath string) []string {
	var out []string
	for _, l := range strings.Split(tailLines(logPath, hintScanLines), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || !listenLogLine.MatchString(l) {
			continue
		}
		if len(l) > hintLineBytes {
			l = l[:hintLineBytes] + "…"
		}
		out = append(out, redactText(l))
	}
	if len(out) > hintLines {
		out = out[len(out)-hintLines:]
	}
	return out
}

// listeningOn returns the addresses the target's tree listens on, read
// from /proc while it still runs ("127.0.0.1:3001", "[::]:8080").
func (p *Process) listeningOn() []string {
	ls, err := proc.Default().ListenersOf(p.tree())
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, l := range ls {
		a := l.Addr.String()
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	httpdrv "github.com/benchrig/benchrig/internal/driver/http"
	"github.com/benchrig/benchrig/internal/result"
)

// httpFlags are the flags of benchrig http.
type httpFlags struct {
	quickFlags
	method       string
	headers      []string
	body         string
	timeout      time.Duration
	expectStatus int
	expectBody   string
	contains     string

	bodyFile     string
	command      string
	startTimeout time.Duration
	attachPID    int
	attachPort   int
}

func httpCmd(a *app) *cobra.Command {
	var hf httpFlags
	c := &cobra.Command{
		Use:   "http URL",
		Short: "Quick HTTP/1.1 load test (closed loop, or constant rate with -R): a suite of one target",
		Example: `  benchrig http http://127.0.0.1:8080/ -c 10 -d 5s
  benchrig http http://127.0.0.1:8080/ -R 1000 -d 10s --fail-unhealthy
  benchrig http http://127.0.0.1:8080/ -c 10 -d 5s -r 5 -o a.json   # then: benchrig verify a.json; benchrig report a.json -o a.html
  benchrig http http://127.0.0.1:8080/api -m POST -H 'Content-Type: application/json' -b '{"a":1}'`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runHTTP(a, c, &hf, args[0])
		},
	}
	hf.quickFlags.register(c, 10)
	f := c.Flags()
	f.StringVarP(&hf.method, "method", "m", "GET", "request method")
	f.StringArrayVarP(&hf.headers, "header", "H", nil, "request header 'Name: value' (repeatable)")
	f.StringVarP(&hf.body, "body", "b", "", "request body; @FILE reads it from FILE (as curl does)")
	f.StringVar(&hf.bodyFile, "body-file", "", "read the request body from this file")
	durationVarP(f, &hf.timeout, "timeout", "", 10*time.Second, "per-request timeout (0: none)")
	f.IntVar(&hf.expectStatus, "expect-status", 0, "status that counts as success (default: any 2xx)")
	f.StringVar(&hf.expectBody, "expect-body", "", "the exact response body that counts as success")
	f.StringVar(&hf.contains, "expect-body-contains", "", "a string the response body must contain")
	f.StringVar(&hf.command, "target", "", "start this server command fresh for every sample (its own process group; gets PORT=<the URL's port>), sample it, stop it")
	durationVarP(f, &hf.startTimeout, "start-timeout", "", 10*time.Second, "how long --target may take to accept connections")
	f.IntVar(&hf.attachPID, "attach-pid", 0, "sample this running server (and its children) without starting or stopping it")
	f.IntVar(&hf.attachPort, "attach-port", 0, "sample the running server listening on this TCP port")
	return c
}

// validate checks the http flags against each other.
func (hf *httpFlags) validate(c *cobra.Command, rawURL string) (port int, err error) {
	if err := hf.quickFlags.validate(c); err != nil {
		return 0, err
	}
	_, addr, err := httpdrv.ParseURL(rawURL)
	if err != nil {
		return 0, usagef("URL %w", err)
	}
	_, ps, _ := net.SplitHostPort(addr)
	port, _ = strconv.Atoi(ps)
	n := 0
	for _, set := range []bool{hf.command != "", hf.attachPID != 0, hf.attachPort != 0} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return 0, usagef("give one of --target, --attach-pid and --attach-port")
	case hf.attachPID < 0:
		return 0, usagef("--attach-pid must be a process ID > 0, got %d", hf.attachPID)
	case hf.attachPort < 0 || hf.attachPort > 65535:
		return 0, usagef("--attach-port must be 1–65535, got %d", hf.attachPort)
	case hf.startTimeout <= 0:
		return 0, usagef("--start-timeout must be > 0, got %s", hf.startTimeout)
	case hf.targetCPUs != "" && hf.command == "":
		return 0, usagef("--target-cpus needs --target")
	case hf.timeout < 0:
		return 0, usagef("--timeout must be ≥ 0, got %s", hf.timeout)
	case hf.expectStatus != 0 && (hf.expectStatus < 100 || hf.expectStatus > 599):
		return 0, usagef("--expect-status must be 100–599, got %d", hf.expectStatus)
	}
	if hf.command != "" {
		if _, err := splitCommand(hf.command); err != nil {
			return 0, usagef("--target: %v", err)
		}
	}
	return port, nil
}

// serverSide reports whether a server is started or sampled.
func (hf *httpFlags) serverSide() bool {
	return hf.command != "" || hf.attachPID != 0 || hf.attachPort != 0
}

// pathDoc is the suite path of the request the flags describe.
func (hf *httpFlags) pathDoc(c *cobra.Command, rawURL string) (doc, error) {
	p := doc{"url": rawURL, "method": strings.ToUpper(hf.method), "timeout": hf.timeout.String()}
	if hf.body != "" {
		p["body"] = hf.body
	}
	if len(hf.headers) > 0 {
		h := doc{}
		for _, kv := range hf.headers {
			k, v, ok := strings.Cut(kv, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, usagef("--header %q: want 'Name: value'", kv)
			}
			h[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		p["headers"] = h
	}
	// 0 accepts any 2xx, as before; a suite's default is 200.
	p["expect_status"] = hf.expectStatus
	if c.Flags().Changed("expect-body") {
		p["expect_body"] = hf.expectBody
	}
	if hf.contains != "" {
		p["expect_body_contains"] = hf.contains
	}
	return p, nil
}

func runHTTP(a *app, c *cobra.Command, hf *httpFlags, rawURL string) error {
	rawURL = withScheme(rawURL)
	if err := hf.readBody(c); err != nil {
		return err
	}
	port, err := hf.validate(c, rawURL)
	if err != nil {
		return err
	}
	def := quickPhases{}
	if hf.serverSide() {
		def = quickPhases{baseline: 1500 * time.Millisecond, settle: time.Second, recovery: 5 * time.Second}
		if hf.rate > 0 {
			def = quickPhases{baseline: 1500 * time.Millisecond, warmup: 15 * time.Second, settle: 6 * time.Second, recovery: 30 * time.Second}
		}
	}
	d := hf.suite(c, "http", def)
	path, err := hf.pathDoc(c, rawURL)
	if err != nil {
		return err
	}
	name, t := "url", doc{"address": doc{}}
	switch {
	case hf.command != "":
		argv, _ := splitCommand(hf.command)
		name = filepath.Base(argv[0])
		t = doc{"command": argv, "port": port, "env": doc{"PORT": strconv.Itoa(port)},
			"ready": doc{"tcp": net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), "timeout": hf.startTimeout.String()}}
	case hf.attachPID != 0:
		name, t = "attached", doc{"attach": doc{"pid": hf.attachPID}, "port": port}
	case hf.attachPort != 0:
		name, t = "attached", doc{"attach": doc{"port": hf.attachPort}, "port": port}
	}
	name = suiteName(name)
	d["targets"] = doc{name: t}
	d["paths"] = doc{"request": doc{"http": path}}
	m := d["matrix"].(doc)
	m["targets"], m["paths"] = []string{name}, []string{"request"}
	job := quickJob{
		name: "benchrig http", doc: d, args: redactArgs(a.args, httpdrv.IsSecretHeader, httpdrv.RedactedValue),
		title: func(s *result.Sample) string {
			conns := 0
			if s.Config != nil {
				conns = s.Config.Engine.Connections
			}
			return fmt.Sprintf("benchrig http %s · %d connections · %s", rawURL, conns, describeWindow(s))
		},
		heading: func(n int) string { return fmt.Sprintf("benchrig http %s · %s", rawURL, plural(n, "sample")) },
	}
	return runQuick(a.ctx, &hf.quickFlags, job, a.stdout, a.stderr)
}

// suiteName makes a suite-valid name of a word (letters, digits, '.', '_',
// '-', starting with a letter or digit).
func suiteName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	out := strings.TrimLeft(b.String(), "._-")
	if out == "" {
		return "target"
	}
	return out
}

// withScheme gives a URL without a scheme the http:// one: localhost:3000/
// (seed 003's autocannon command) means http://localhost:3000/.
func withScheme(raw string) string {
	if strings.Contains(raw, "://") {
		return raw
	}
	return "http://" + raw
}

// maxBodyBytes bounds a request body read from a file.
const maxBodyBytes = 64 << 20

// readBody resolves -b @FILE and --body-file into the body itself.
func (hf *httpFlags) readBody(c *cobra.Command) error {
	file, flag := hf.bodyFile, "--body-file"
	if file != "" && c.Flags().Changed("body") {
		return usagef("give -b/--body or --body-file, not both")
	}
	if file == "" {
		name, ok := strings.CutPrefix(hf.body, "@")
		if !ok {
			return nil
		}
		file, flag = name, "-b @FILE"
	}
	st, err := os.Stat(file)
	switch {
	case err != nil:
		return usagef("%s: %v", flag, err)
	case !st.Mode().IsRegular():
		return usagef("%s: %s is not a regular file", flag, file)
	case st.Size() > maxBodyBytes:
		return usagef("%s: %s is %d bytes; the most a request body may be is %d", flag, file, st.Size(), maxBodyBytes)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return usagef("%s: %v", flag, err)
	}
	hf.body = string(b)
	return nil
}

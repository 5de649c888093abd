package grpcquick

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	grpcdrv "github.com/benchrig/benchrig/internal/protocol/grpc/driver"
	httpdrv "github.com/benchrig/benchrig/internal/protocol/http/driver"
	"github.com/benchrig/benchrig/internal/quick"
	"github.com/benchrig/benchrig/internal/result"
)

// Quick are the options of benchrig grpc.
type Quick struct {
	quick.Common
	Proto       []string
	ImportPaths []string
	Reflection  bool
	Compression string
	Call        string
	Data        string // "@FILE" reads FILE
	DataFile    string
	Metadata    []string // "name: value"
	KeySpace    int64
	Authority   string
	Streams     int
	Deadline    time.Duration
	Timeout     time.Duration

	ExpectStatus   string
	ExpectContains string
	ExpectJSON     string
	ExpectMessages int
	StreamMessages int

	// Insecure is cleartext HTTP/2; else TLS, configured by SkipVerify,
	// CACert, Cert, Key and ServerName.
	Insecure   bool
	SkipVerify bool
	CACert     string
	Cert       string
	Key        string
	ServerName string

	// Command starts the server fresh for every sample; AttachPID and
	// AttachPort sample a running one; none: the address only.
	Command      string
	StartTimeout time.Duration
	AttachPID    int
	AttachPort   int
}

// Build returns the suite of one gRPC target at addr (host:port).
func (g *Quick) Build(addr string) (quick.Doc, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	port, err := g.check(addr)
	if err != nil {
		return nil, err
	}
	data, _, err := httpdrv.ReadBodyArg(g.Data)
	if err != nil {
		return nil, fmt.Errorf("--data: %w", err)
	}
	path := quick.Doc{"call": g.Call, "timeout": g.Timeout.String()}
	if len(g.Proto) > 0 {
		path["proto"] = g.Proto
	}
	if g.Reflection {
		path["reflection"] = true
	}
	if g.Compression != "" {
		path["compression"] = g.Compression
	}
	if len(g.ImportPaths) > 0 {
		path["import_paths"] = g.ImportPaths
	}
	if data != "" {
		path["data"] = data
	}
	if g.DataFile != "" {
		path["data_file"] = g.DataFile
	}
	if g.Deadline > 0 {
		path["deadline"] = g.Deadline.String()
	}
	if g.Authority != "" {
		path["authority"] = g.Authority
	}
	if g.StreamMessages != 0 {
		path["stream_messages"] = g.StreamMessages
	}
	if len(g.Metadata) > 0 {
		md, err := quick.NameValues("--metadata", g.Metadata)
		if err != nil {
			return nil, err
		}
		path["metadata"] = md
	}
	if !g.Insecure {
		tls := quick.Doc{}
		for _, kv := range []struct{ k, v string }{{"cacert", g.CACert}, {"cert", g.Cert}, {"key", g.Key}, {"server_name", g.ServerName}} {
			if kv.v != "" {
				tls[kv.k] = kv.v
			}
		}
		if g.SkipVerify {
			tls["insecure"] = true
		}
		path["tls"] = tls
	}
	exp := quick.Doc{}
	for _, kv := range []struct{ k, v string }{{"status", g.ExpectStatus}, {"message_contains", g.ExpectContains}, {"json_equal", g.ExpectJSON}} {
		if kv.v != "" {
			exp[kv.k] = kv.v
		}
	}
	if g.ExpectMessages != 0 {
		exp["messages"] = g.ExpectMessages
	}
	if len(exp) > 0 {
		path["expect"] = exp
	}
	// The driver's own rules (the .proto files, the method, the message),
	// before anything starts.
	if err := g.dryRun(addr, data); err != nil {
		return nil, err
	}

	def := result.Phases{}
	if g.Command != "" || g.AttachPID != 0 || g.AttachPort != 0 {
		def = result.Phases{Baseline: 1500 * time.Millisecond, Settle: time.Second, Recovery: 5 * time.Second}
	}
	d := g.Suite("grpc", def)
	name, t := "server", quick.Doc{"address": quick.Doc{"addr": addr}}
	switch {
	case g.Command != "":
		argv, _ := quick.SplitCommand(g.Command)
		name = filepath.Base(argv[0])
		t = quick.Doc{"command": argv, "port": port, "env": quick.Doc{"PORT": strconv.Itoa(port)},
			"ready": quick.Doc{"tcp": addr, "timeout": g.StartTimeout.String()}}
	case g.AttachPID != 0:
		name, t = "attached", quick.Doc{"attach": quick.Doc{"pid": g.AttachPID}, "port": port}
	case g.AttachPort != 0:
		name, t = "attached", quick.Doc{"attach": quick.Doc{"port": g.AttachPort}, "port": port}
	}
	t["serves"] = []string{"grpc"}
	name = quick.SuiteName(name)
	method := quick.SuiteName(strings.ToLower(g.Call[strings.LastIndexAny(g.Call, "/.")+1:]))
	d["targets"] = quick.Doc{name: t}
	d["paths"] = quick.Doc{method: quick.Doc{"grpc": path}}
	d["workloads"] = quick.Doc{"keys": quick.Doc{"kind": "hot", "rows": g.KeySpace, "hot": g.KeySpace}}
	m := d["matrix"].(quick.Doc)
	m["targets"], m["paths"], m["workloads"] = []string{name}, []string{method}, []string{"keys"}
	if g.Changed("streams") {
		m["pipeline"] = []int{g.Streams}
	}
	return d, nil
}

// check checks the options against each other and returns addr's port.
func (g *Quick) check(addr string) (int, error) {
	host, ps, err := net.SplitHostPort(addr)
	port, perr := strconv.Atoi(ps)
	if err != nil || host == "" || perr != nil || port < 1 || port > 65535 {
		return 0, fmt.Errorf("address %q: want HOST:PORT with a port 1–65535 (a gRPC server's address, no scheme)", addr)
	}
	n := 0
	for _, set := range []bool{g.Command != "", g.AttachPID != 0, g.AttachPort != 0} {
		if set {
			n++
		}
	}
	tlsSet := g.SkipVerify || g.CACert != "" || g.Cert != "" || g.Key != "" || g.ServerName != ""
	switch {
	case g.Call == "":
		return 0, fmt.Errorf("--call is required: the method, e.g. helloworld.Greeter/SayHello")
	case len(g.Proto) == 0 && !g.Reflection:
		return 0, fmt.Errorf("--proto is required: the .proto file describing %s (or --reflection, to ask the server)", g.Call)
	case len(g.Proto) > 0 && g.Reflection:
		return 0, fmt.Errorf("give --proto or --reflection, not both")
	case g.Data != "" && g.DataFile != "":
		return 0, fmt.Errorf("give --data or --data-file, not both")
	case g.Insecure && tlsSet:
		return 0, fmt.Errorf("--insecure is cleartext HTTP/2: --skip-verify, --cacert, --cert, --key and --servername are TLS options")
	case (g.Cert == "") != (g.Key == ""):
		return 0, fmt.Errorf("--cert and --key go together: give both or neither")
	case n > 1:
		return 0, fmt.Errorf("give one of --target, --attach-pid and --attach-port")
	case g.AttachPID < 0:
		return 0, fmt.Errorf("--attach-pid must be a process ID > 0, got %d", g.AttachPID)
	case g.AttachPort < 0 || g.AttachPort > 65535:
		return 0, fmt.Errorf("--attach-port must be 1–65535, got %d", g.AttachPort)
	case g.StartTimeout <= 0:
		return 0, fmt.Errorf("--start-timeout must be > 0, got %s", g.StartTimeout)
	case g.TargetCPUs != "" && g.Command == "":
		return 0, fmt.Errorf("--target-cpus needs --target")
	case g.Timeout < 0 || g.Deadline < 0:
		return 0, fmt.Errorf("--timeout and --deadline must be ≥ 0")
	case g.KeySpace < 1 || g.KeySpace > 1<<40:
		return 0, fmt.Errorf("--keyspace must be 1–%d, got %d", int64(1)<<40, g.KeySpace)
	case g.Changed("streams") && g.Changed("pipeline"):
		return 0, fmt.Errorf("give --streams or --pipeline, not both: for gRPC they are the same (calls in flight per connection)")
	case g.Streams < 1 || g.Streams > httpdrv.MaxPipeline:
		return 0, fmt.Errorf("--streams must be 1–%d, got %d", httpdrv.MaxPipeline, g.Streams)
	}
	if g.Command != "" {
		if _, err := quick.SplitCommand(g.Command); err != nil {
			return 0, fmt.Errorf("--target: %v", err)
		}
	}
	return port, nil
}

// dryRun builds the driver once without connecting: the .proto files,
// the method, the message and the expected answer are checked before
// anything starts.
func (g *Quick) dryRun(addr, data string) error {
	if g.Reflection {
		return nil // the server describes the method once it runs
	}
	dc := grpcdrv.DefaultConfig()
	dc.Addr, dc.Call, dc.Proto, dc.ImportPaths = addr, g.Call, g.Proto, g.ImportPaths
	dc.Data, dc.DataFile, dc.Deadline = data, g.DataFile, g.Deadline
	dc.ExpectStatus, dc.ExpectContains, dc.ExpectJSON = g.ExpectStatus, g.ExpectContains, g.ExpectJSON
	dc.StreamMessages, dc.ExpectMessages, dc.Compression = g.StreamMessages, g.ExpectMessages, g.Compression
	dc.Workload.Rows, dc.Workload.Hot = g.KeySpace, g.KeySpace
	_, err := grpcdrv.New(dc)
	return err
}

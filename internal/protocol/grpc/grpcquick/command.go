// Package grpcquick is benchrig grpc, the quick mode of the gRPC
// protocol: its flags build a suite of one target (package quick) that
// runs like any other.
package grpcquick

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/cli"
	"github.com/benchrig/benchrig/internal/cliflag"
	"github.com/benchrig/benchrig/internal/execute"
	"github.com/benchrig/benchrig/internal/exitcode"
	grpcproto "github.com/benchrig/benchrig/internal/protocol/grpc"
	"github.com/benchrig/benchrig/internal/quick"
	"github.com/benchrig/benchrig/internal/result"
)

// grpcFlags are the flags of benchrig grpc.
type grpcFlags struct {
	cli.QuickFlags
	g Quick
}

func init() { cli.RegisterQuick(string(grpcproto.Key), grpcCmd) }

func grpcCmd(a *cli.App) *cobra.Command {
	var gf grpcFlags
	c := &cobra.Command{
		Use:   "grpc HOST:PORT --proto FILE --call pkg.Service/Method",
		Short: "Quick gRPC load test of one unary method (closed loop with --streams calls per connection, or constant rate with -R): a suite of one target",
		Example: `  benchrig grpc 127.0.0.1:50051 --insecure --proto greeter.proto --call helloworld.Greeter/SayHello --data '{"name":"x"}' -c 4 --streams 16 -d 10s
  benchrig grpc 127.0.0.1:50051 --cacert ca.pem --proto api.proto --call api.Users/Get --data '{"id":{id}}' --metadata 'authorization: Bearer …' -c 8 -d 5s
  benchrig grpc 127.0.0.1:50051 --insecure --proto api.proto --call api.Users/Get --data-file requests.bin -R 2000 -d 30s
  benchrig grpc 127.0.0.1:50051 --insecure --proto api.proto --call api.Users/Get --target './server --port 50051' -r 5 -o a.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runGRPC(a, &gf, args[0])
		},
	}
	gf.QuickFlags.Register(c, 4)
	f := c.Flags()
	g := &gf.g
	f.StringArrayVar(&g.Proto, "proto", nil, "a .proto file describing the method (repeatable)")
	f.BoolVar(&g.Reflection, "reflection", false, "describe the method from the server's reflection service instead of --proto")
	f.StringVar(&g.Compression, "compression", "", "gzip: send compressed request messages and accept compressed answers (default: none)")
	f.StringArrayVar(&g.ImportPaths, "import-path", nil, "where the .proto files' imports are found (repeatable; protoc's -I; default each file's directory)")
	f.StringVar(&g.Call, "call", "", "the method: pkg.Service/Method (ghz's pkg.Service.Method is accepted)")
	f.StringVar(&g.Data, "data", "", "the request message as JSON; {id} is a key 1…--keyspace (a top-level integer's value, or inside a string); @FILE reads FILE")
	f.StringVar(&g.DataFile, "data-file", "", "a file of length-prefixed binary request messages (ghz's --binary), sent in turn")
	f.StringArrayVar(&g.Metadata, "metadata", nil, "request metadata 'name: value' (repeatable)")
	f.Int64Var(&g.KeySpace, "keyspace", 1000, "the keys {id} takes, 1…keyspace, in turn")
	f.BoolVar(&g.Insecure, "insecure", false, "cleartext HTTP/2 (h2c), no TLS, as ghz's --insecure")
	f.BoolVar(&g.SkipVerify, "skip-verify", false, "TLS: do not verify the server's certificate (ghz's --skipTLS)")
	f.StringVar(&g.CACert, "cacert", "", "TLS: trust the certificate authorities in this PEM file instead of the system's")
	f.StringVar(&g.Cert, "cert", "", "TLS: send this PEM client certificate (with --key)")
	f.StringVar(&g.Key, "key", "", "TLS: the private key of --cert (PEM)")
	f.StringVar(&g.ServerName, "servername", "", "TLS: the SNI name and the name the certificate must carry (default the host)")
	f.StringVar(&g.Authority, "authority", "", "the :authority sent (default HOST:PORT)")
	f.IntVar(&g.Streams, "streams", 1, "concurrent calls per connection (HTTP/2 streams); the pipeline of the run")
	cliflag.DurationVarP(f, &g.Deadline, "deadline", "", 0, "each call's deadline, sent as grpc-timeout (0: none)")
	cliflag.DurationVarP(f, &g.Timeout, "timeout", "", 10*time.Second, "per-call timeout on the client (0: none)")
	f.StringVar(&g.ExpectStatus, "expect-status", "", "the status that counts as success: a code name or number (default OK)")
	f.StringVar(&g.ExpectContains, "expect-contains", "", "a text the response message's JSON must contain")
	f.StringVar(&g.ExpectJSON, "expect-json", "", "the response message, as JSON, it must equal (compared as messages)")
	f.IntVar(&g.ExpectMessages, "expect-messages", 0, "server-streaming and bidirectional methods: the messages each call must answer (0: any)")
	f.IntVar(&g.StreamMessages, "stream-messages", 0, "client-streaming and bidirectional methods: request messages per call, all sent before the stream is half-closed (default 1)")
	f.StringVar(&g.Command, "target", "", "start this server command fresh for every sample (its own process group; gets PORT=<the port>), sample it, stop it")
	cliflag.DurationVarP(f, &g.StartTimeout, "start-timeout", "", 10*time.Second, "how long --target may take to accept connections")
	f.IntVar(&g.AttachPID, "attach-pid", 0, "sample this running server (and its children) without starting or stopping it")
	f.IntVar(&g.AttachPort, "attach-port", 0, "sample the running server listening on this TCP port")
	return c
}

func runGRPC(a *cli.App, gf *grpcFlags, addr string) error {
	if err := gf.Options(); err != nil {
		return err
	}
	gf.g.Common = gf.Common
	d, err := gf.g.Build(addr)
	if err != nil {
		return exitcode.Usage(err)
	}
	return cli.RunQuick(a, &gf.QuickFlags, grpcJob(a.WithSecretNames(d), addr, gf.g.Call))
}

// grpcJob is benchrig grpc's job: its report is titled by the address
// and method.
func grpcJob(doc quick.Doc, addr, call string) execute.Quick {
	return execute.Quick{
		Name: "benchrig grpc", Doc: doc,
		Title: func(s *result.Sample) string {
			conns, streams := 0, 0
			if s.Config != nil {
				conns, streams = s.Config.Engine.Connections, s.Config.Engine.Pipeline
			}
			return fmt.Sprintf("benchrig grpc %s %s · %d connections × %d streams · %s", addr, call, conns, streams, execute.DescribeWindow(s))
		},
		Heading: func(n int) string {
			return fmt.Sprintf("benchrig grpc %s %s · %s", addr, call, execute.Plural(n, "sample"))
		},
	}
}

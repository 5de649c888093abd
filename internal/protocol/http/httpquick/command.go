package httpquick

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/cli"
	"github.com/benchrig/benchrig/internal/cliflag"
	"github.com/benchrig/benchrig/internal/execute"
	"github.com/benchrig/benchrig/internal/exitcode"
	httpproto "github.com/benchrig/benchrig/internal/protocol/http"
	"github.com/benchrig/benchrig/internal/quick"
	"github.com/benchrig/benchrig/internal/result"
)

// httpFlags are the flags of benchrig http (and capacity).
type httpFlags struct {
	cli.QuickFlags
	h Quick
	// search is set for benchrig capacity.
	search *searchFlags
}

func init() { cli.RegisterQuick(string(httpproto.Key), httpCmd) }

func httpCmd(a *cli.App) *cobra.Command { return newHTTPCmd(a, &httpFlags{}) }

// newHTTPCmd is benchrig http's command with its flags bound to hf.
func newHTTPCmd(a *cli.App, hf *httpFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "http [URL]",
		Short: "Quick HTTP/1.1, HTTPS or HTTP/2 load test (closed loop, or constant rate with -R): a suite of one target",
		Example: `  benchrig http http://127.0.0.1:8080/ -c 10 -d 5s
  benchrig http https://127.0.0.1:8443/ --cacert ca.pem -c 10 -d 5s
  benchrig http https://127.0.0.1:8443/ --http2 --streams 10 -c 4 -d 5s --insecure
  benchrig http h2c://127.0.0.1:8080/ --streams 10 -c 4 -d 5s
  benchrig http http://127.0.0.1:8080/ -R 1000 -d 10s --fail-unhealthy
  benchrig http http://127.0.0.1:8080/ -c 10 -d 5s -r 5 -o a.json   # then: benchrig verify a.json; benchrig report a.json -o a.html
  benchrig http http://127.0.0.1:8080/api -m POST -H 'Content-Type: application/json' -b '{"a":1}'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			url := ""
			if len(args) == 1 {
				url = args[0]
			}
			return runHTTP(a, c, hf, url)
		},
	}
	hf.QuickFlags.Register(c, 10)
	f := c.Flags()
	f.StringVarP(&hf.h.Method, "method", "m", "GET", "request method")
	f.StringArrayVarP(&hf.h.Headers, "header", "H", nil, "request header 'Name: value' (repeatable)")
	f.StringVarP(&hf.h.Body, "body", "b", "", "request body; @FILE reads it from FILE (as curl does)")
	f.StringVar(&hf.h.BodyFile, "body-file", "", "read the request body from this file")
	f.StringVar(&hf.h.TargetsFile, "targets", "", "send the requests of this file (vegeta's targets format: METHOD URL, header lines, @body-file; weight=N after the URL) instead of one")
	f.StringVar(&hf.h.Order, "order", "", "how --targets requests are picked: cycle (default, each weight times in a row) or random (seeded by --seed)")
	f.BoolVar(&hf.h.RetryUnsafe, "retry-unsafe", false, "re-send a POST or PATCH, too, on a connection the server closed before answering (idempotent requests always are)")
	cliflag.DurationVarP(f, &hf.h.Timeout, "timeout", "", 10*time.Second, "per-request timeout (0: none)")
	f.IntVar(&hf.h.ExpectStatus, "expect-status", 0, "status that counts as success (default: any 2xx)")
	f.StringVar(&hf.h.ExpectBody, "expect-body", "", "the exact response body that counts as success")
	f.StringVar(&hf.h.Contains, "expect-body-contains", "", "a string the response body must contain")
	f.StringVar(&hf.h.Command, "target", "", "start this server command fresh for every sample (its own process group; gets PORT=<the URL's port>), sample it, stop it")
	cliflag.DurationVarP(f, &hf.h.StartTimeout, "start-timeout", "", 10*time.Second, "how long --target may take to accept connections")
	f.IntVar(&hf.h.AttachPID, "attach-pid", 0, "sample this running server (and its children) without starting or stopping it")
	f.IntVar(&hf.h.AttachPort, "attach-port", 0, "sample the running server listening on this TCP port")
	f.BoolVar(&hf.h.AttachTree, "attach-tree", false, "with --attach-port: sample every process listening on the port (workers of one server) through their common ancestor")
	f.StringVar(&hf.h.MetricsURL, "metrics-url", "", "scrape the target's own metrics (Prometheus text format) at this URL through every phase, on a connection of its own")
	f.StringSliceVar(&hf.h.MetricsSeries, "metrics-series", nil, "with --metrics-url: the metric names to record beside RSS (comma-separated, at most 32)")
	cliflag.DurationVarP(f, &hf.h.MetricsEvery, "metrics-every", "", 0, "with --metrics-url: the scrape period (default 1s, 100ms to 1m)")
	f.StringVar(&hf.h.Limits.CPUs, "limit-cpus", "", "with --target: CPU time the server's whole process tree may use per second, in cores (e.g. 0.5), in a control group of its own per sample")
	f.StringVar(&hf.h.Limits.Memory, "limit-memory", "", "with --target: the most memory the server's tree may use (e.g. 512MiB, 2g); past it the kernel's OOM killer ends the sample")
	f.StringVar(&hf.h.Limits.Swap, "limit-swap", "", "with --target and --limit-memory: swap allowed beyond the memory limit (0: none, as --memory-swap equal to --memory)")
	f.StringVar(&hf.h.Limits.Pids, "limit-pids", "", "with --target: the most processes and threads the server's tree may hold")
	httpWireFlags(c, &hf.h.Wire)
	return c
}

func runHTTP(a *cli.App, c *cobra.Command, hf *httpFlags, rawURL string) error {
	if c.Flags().Changed("target") && strings.TrimSpace(hf.h.Command) == "" {
		return exitcode.Usagef("--target is empty: give the server's command line, e.g. --target './server --port 8080' (or leave --target out to load a server already running)")
	}
	if err := hf.Options(); err != nil {
		return err
	}
	if hf.search != nil {
		if err := hf.search.check(c); err != nil {
			return err
		}
		if !c.Flags().Changed("connections") {
			hf.Conns = []int{32}
		}
		hf.RateSearch = true // --arrival, --max-backlog, --timer-slack apply to its steps
	}
	hf.h.Common = hf.Common
	d, rawURL, err := hf.h.Build(rawURL)
	if err != nil {
		return exitcode.Usage(err)
	}
	rawURL = a.Policy.URL(rawURL, a.Secrets)
	job := httpJob(a.WithSecretNames(d), rawURL)
	if hf.search != nil {
		d["search"] = hf.search.doc()
		job = capacityJob(job, rawURL)
	}
	return cli.RunQuick(a, &hf.QuickFlags, job)
}

// httpJob is benchrig http's job against rawURL (as shown, credentials
// hidden): its report is titled by the URL and connections.
func httpJob(doc quick.Doc, rawURL string) execute.Quick {
	return execute.Quick{
		Name: "benchrig http", Doc: doc,
		Title: func(s *result.Sample) string {
			conns := 0
			if s.Config != nil {
				conns = s.Config.Engine.Connections
			}
			return fmt.Sprintf("benchrig http %s · %d connections · %s", rawURL, conns, execute.DescribeWindow(s))
		},
		Heading: func(n int) string { return fmt.Sprintf("benchrig http %s · %s", rawURL, execute.Plural(n, "sample")) },
	}
}

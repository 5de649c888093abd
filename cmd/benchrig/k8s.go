package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/agent/k8s"
	"github.com/benchrig/benchrig/internal/cli"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/plan"
)

// k8sCmd is `benchrig k8s SUITE --agents N --image IMAGE`: the manifests of a
// distributed run on Kubernetes, printed for kubectl apply -f -; and `k8s
// fetch`, which recovers the results file from the coordinator's log.
func k8sCmd(a *cli.App) *cobra.Command {
	var (
		sets  []string
		smoke bool
		o     = k8s.Options{Port: k8s.DefaultPort}
	)
	c := &cobra.Command{
		Use:   "k8s SUITE.yaml --agents N --image IMAGE",
		Short: "Print Kubernetes manifests (ConfigMap, coordinator Job + Service, agents as an Indexed Job) for kubectl apply -f -",
		Example: `  kubectl create secret generic mybench-token --from-literal=token="$(head -c 32 /dev/urandom | base64)"
  benchrig k8s suite.yaml --agents 4 --image registry.example/benchrig:v1 --name mybench | kubectl apply -f -
  kubectl wait --for=condition=complete job/mybench-coordinator --timeout=1h
  kubectl logs job/mybench-coordinator | benchrig k8s fetch -o results.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			s, p, err := plan.Load(args[0], sets, smoke)
			if err != nil {
				return err
			}
			if o.Name == "" {
				o.Name = k8s.DNSLabel(s.Name)
			}
			if !c.Flags().Changed("token-secret") {
				o.TokenSecret = o.Name + "-token"
			}
			if o.Suite, err = s.Resolved(); err != nil {
				return err
			}
			_ = p
			m, err := k8s.Build(o)
			if err != nil {
				return exitcode.Usage(err)
			}
			return m.Write(a.Stdout)
		},
	}
	f := c.Flags()
	f.IntVar(&o.Agents, "agents", 0, "agent pods (the Indexed Job's completions and parallelism)")
	f.StringVar(&o.Image, "image", "", "benchrig's container image (see deploy/Dockerfile)")
	f.StringVar(&o.Name, "name", "", "prefix of every object (default: the suite's name)")
	f.StringVar(&o.Namespace, "namespace", "", "namespace written into every object")
	f.StringVar(&o.TokenSecret, "token-secret", "", "Secret whose key \"token\" is the shared token (default: NAME-token)")
	f.IntVar(&o.Port, "port", k8s.DefaultPort, "the coordinator's port")
	f.StringVar(&o.AgentCPU, "agent-cpu", "1", "CPU request of each agent pod")
	f.StringVar(&o.AgentMemory, "agent-memory", "256Mi", "memory request (and limit) of each agent pod")
	f.StringVar(&o.CoordinatorCPU, "coordinator-cpu", "500m", "CPU request of the coordinator pod")
	f.StringVar(&o.CoordinatorMemory, "coordinator-memory", "512Mi", "memory request (and limit) of the coordinator pod")
	f.StringVar(&o.JoinFor, "join-for", "10m", "how long the coordinator waits for the agents, and they for it")
	f.StringArrayVar(&sets, "set", nil, "override a suite value (as run --set)")
	f.BoolVar(&smoke, "smoke", false, "the suite's smoke plan")
	c.AddCommand(k8sFetchCmd(a))
	return c
}

func k8sFetchCmd(a *cli.App) *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "fetch [LOG] -o RESULTS.json",
		Short: "Recover the results file from the coordinator pod's log (a file, or stdin)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if out == "" {
				return exitcode.Usagef("-o/--out RESULTS.json is required")
			}
			n, err := k8s.FetchFile(args, os.Stdin, out)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.Stdout, "%s: %d bytes recovered; `benchrig verify %s` checks it\n", out, n, out)
			return nil
		},
	}
	c.Flags().StringVarP(&out, "out", "o", "", "where to write the results file")
	return c
}

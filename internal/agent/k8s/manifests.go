// Package k8s renders the Kubernetes manifests of a distributed benchrig run
// (benchrig k8s SUITE --agents N --image IMAGE): a ConfigMap holding the
// resolved suite, the coordinator as a Job of one pod behind a Service, and
// the agents as an Indexed Job whose JOB_COMPLETION_INDEX is each agent's
// share. The objects are plain structs under the k8s.io/api types' field
// names (objects.go); nothing here talks to a cluster.
// The coordinator prints the results file to its log between markers
// (Emit), and Fetch recovers it from a log (kubectl cp cannot copy from a
// completed pod).
package k8s

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/benchrig/benchrig/internal/load"
)

// Options describe one distributed run on a cluster.
type Options struct {
	// Name prefixes every object (a DNS-1123 label, at most 40 characters).
	Name string
	// Namespace, if set, is written into every object.
	Namespace string
	// Image is benchrig's container image.
	Image string
	// Agents is how many agent pods run the load (1 … load.MaxShares).
	Agents int
	// Suite is the resolved suite (JSON), as the results file records it.
	Suite []byte
	// TokenSecret names the Secret whose key "token" is the shared token
	// (created beforehand: the manifests only refer to it).
	TokenSecret string
	// Port is the coordinator's port (default 7946).
	Port int
	// AgentCPU, AgentMemory, CoordinatorCPU, CoordinatorMemory are the
	// pods' resource requests (Kubernetes quantities: "1", "500m",
	// "256Mi"); the memory request is also the limit.
	AgentCPU, AgentMemory, CoordinatorCPU, CoordinatorMemory string
	// JoinFor is how long the coordinator waits for the agents ("10m").
	JoinFor string
}

// DefaultPort is the coordinator's port when Options.Port is 0.
const DefaultPort = 7946

// TokenKey is the key of the token in the Secret.
const TokenKey = "token"

// SuiteKey is the file name of the suite in the ConfigMap and its mount.
const SuiteKey = "suite.json"

var labelRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Validate reports the first bad option, naming its flag.
func (o *Options) Validate() error {
	if len(o.Name) == 0 || len(o.Name) > 40 || !labelRE.MatchString(o.Name) {
		return fmt.Errorf("--name %q: want 1 to 40 lower-case letters, digits and '-', starting and ending with a letter or digit", o.Name)
	}
	if o.Namespace != "" && (len(o.Namespace) > 63 || !labelRE.MatchString(o.Namespace)) {
		return fmt.Errorf("--namespace %q is not a DNS-1123 label", o.Namespace)
	}
	if o.Image == "" || strings.ContainsAny(o.Image, " \t\n") {
		return fmt.Errorf("--image %q: want an image reference (registry/benchrig:tag)", o.Image)
	}
	if o.Agents < 1 || o.Agents > load.MaxShares {
		return fmt.Errorf("--agents must be 1 to %d, got %d", load.MaxShares, o.Agents)
	}
	if o.TokenSecret == "" || len(o.TokenSecret) > 253 || !labelRE.MatchString(o.TokenSecret) {
		return fmt.Errorf("--token-secret %q: want the name of a Secret holding key %q", o.TokenSecret, TokenKey)
	}
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	if o.Port < 1 || o.Port > 65535 {
		return fmt.Errorf("--port must be 1 to 65535, got %d", o.Port)
	}
	for _, q := range []struct{ flag, v string }{{"--agent-cpu", o.AgentCPU}, {"--agent-memory", o.AgentMemory},
		{"--coordinator-cpu", o.CoordinatorCPU}, {"--coordinator-memory", o.CoordinatorMemory}} {
		if err := checkQuantity(q.v); err != nil {
			return fmt.Errorf("%s %q: %v", q.flag, q.v, err)
		}
	}
	if len(o.Suite) == 0 {
		return fmt.Errorf("no suite")
	}
	return nil
}

// Manifests are the objects of one run, in the order kubectl applies them.
type Manifests struct {
	Suite       *ConfigMap
	Service     *Service
	Coordinator *Job
	Agents      *Job
}

// Build makes the run's objects.
func Build(o Options) (*Manifests, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	coordName, agentsName := o.Name+"-coordinator", o.Name+"-agents"
	labels := func(component string) map[string]string {
		return map[string]string{"app.kubernetes.io/name": "benchrig", "app.kubernetes.io/instance": o.Name, "app.kubernetes.io/component": component}
	}
	meta := func(name, component string) objectMeta {
		return objectMeta{Name: name, Namespace: o.Namespace, Labels: labels(component)}
	}
	token := envVar{Name: "BENCHRIG_AGENT_TOKEN", ValueFrom: envSource{SecretKeyRef: secretKeyRef{Name: o.TokenSecret, Key: TokenKey}}}
	port := strconv.Itoa(o.Port)
	zero := int32(0)
	one := int32(1)
	n := int32(o.Agents)
	m := &Manifests{}
	m.Suite = &ConfigMap{typeMeta: typeMeta{APIVersion: "v1", Kind: "ConfigMap"}, Metadata: meta(o.Name+"-suite", "suite"),
		Data: map[string]string{SuiteKey: string(o.Suite)}}
	m.Service = &Service{typeMeta: typeMeta{APIVersion: "v1", Kind: "Service"}, Metadata: meta(coordName, "coordinator"),
		Spec: serviceSpec{Selector: labels("coordinator"), Ports: []servicePort{{Name: "agents", Port: int32(o.Port), TargetPort: int32(o.Port), Protocol: "TCP"}}}}

	coordPod := newPodSpec(o.Image, []string{"run", "/etc/benchrig/" + SuiteKey, "--agents", strconv.Itoa(o.Agents), "--listen", "0.0.0.0:" + port,
		"-o", "/tmp/results.json", "--log-results", "--join-for", o.JoinFor}, token, o.CoordinatorCPU, o.CoordinatorMemory)
	coordPod.Containers[0].Ports = []containerPort{{Name: "agents", ContainerPort: int32(o.Port), Protocol: "TCP"}}
	coordPod.Volumes = append(coordPod.Volumes, volume{Name: "suite", ConfigMap: &configMapSource{Name: m.Suite.Metadata.Name}})
	coordPod.Containers[0].VolumeMounts = append(coordPod.Containers[0].VolumeMounts, volumeMount{Name: "suite", MountPath: "/etc/benchrig", ReadOnly: true})
	m.Coordinator = &Job{typeMeta: typeMeta{APIVersion: "batch/v1", Kind: "Job"}, Metadata: meta(coordName, "coordinator"),
		Spec: jobSpec{Completions: &one, Parallelism: &one, BackoffLimit: &zero,
			Template: podTemplate{Metadata: objectMeta{Labels: labels("coordinator")}, Spec: coordPod}}}

	agentPod := newPodSpec(o.Image, []string{"agent", "--coordinator", coordName + ":" + port, "--dial-for", o.JoinFor}, token, o.AgentCPU, o.AgentMemory)
	agentPod.Affinity = &affinity{PodAntiAffinity: podAntiAffinity{Preferred: []weightedTerm{{Weight: 100, PodAffinityTerm: podAffinityTerm{
		LabelSelector: labelSelector{MatchLabels: labels("agent")}, TopologyKey: "kubernetes.io/hostname"}}}}}
	m.Agents = &Job{typeMeta: typeMeta{APIVersion: "batch/v1", Kind: "Job"}, Metadata: meta(agentsName, "agent"),
		Spec: jobSpec{CompletionMode: "Indexed", Completions: &n, Parallelism: &n, BackoffLimit: &zero,
			Template: podTemplate{Metadata: objectMeta{Labels: labels("agent")}, Spec: agentPod}}}
	return m, nil
}

// newPodSpec is a pod of one benchrig container: never restarted (a crashed
// agent is not silently replaced mid-run), non-root, read-only root with
// a writable /tmp.
func newPodSpec(image string, args []string, token envVar, cpu, mem string) podSpec {
	return podSpec{
		RestartPolicy: "Never",
		Containers: []container{{
			Name: "benchrig", Image: image, Args: args, Env: []envVar{token},
			Resources: resources{
				Requests: map[string]string{"cpu": cpu, "memory": mem},
				Limits:   map[string]string{"memory": mem},
			},
			SecurityContext: securityContext{RunAsNonRoot: true, RunAsUser: 65532, AllowPrivilegeEscalation: false, ReadOnlyRootFilesystem: true},
			VolumeMounts:    []volumeMount{{Name: "tmp", MountPath: "/tmp"}},
		}},
		Volumes: []volume{{Name: "tmp", EmptyDir: &struct{}{}}},
	}
}

// Objects are the manifests in apply order.
func (m *Manifests) Objects() []any { return []any{m.Suite, m.Service, m.Coordinator, m.Agents} }

// Write prints the manifests as YAML documents for kubectl apply -f -.
func (m *Manifests) Write(w io.Writer) error {
	var b bytes.Buffer
	for i, obj := range m.Objects() {
		y, err := yaml.Marshal(obj)
		if err != nil {
			return fmt.Errorf("encode manifest %d: %w", i+1, err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	_, err := w.Write(b.Bytes())
	return err
}

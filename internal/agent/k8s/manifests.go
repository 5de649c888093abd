// Package k8s renders the Kubernetes manifests of a distributed benchrig run
// (benchrig k8s SUITE --agents N --image IMAGE): a ConfigMap holding the
// resolved suite, the coordinator as a Job of one pod behind a Service, and
// the agents as an Indexed Job whose JOB_COMPLETION_INDEX is each agent's
// share. The objects are k8s.io/api types; nothing here talks to a cluster.
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

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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
		if _, err := resource.ParseQuantity(q.v); err != nil {
			return fmt.Errorf("%s %q: not a Kubernetes quantity (\"1\", \"500m\", \"256Mi\"): %v", q.flag, q.v, err)
		}
	}
	if len(o.Suite) == 0 {
		return fmt.Errorf("no suite")
	}
	return nil
}

// Manifests are the objects of one run, in the order kubectl applies them.
type Manifests struct {
	Suite       *corev1.ConfigMap
	Service     *corev1.Service
	Coordinator *batchv1.Job
	Agents      *batchv1.Job
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
	meta := func(name, component string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: labels(component)}
	}
	token := corev1.EnvVar{Name: "BENCHRIG_AGENT_TOKEN", ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: o.TokenSecret}, Key: TokenKey}}}
	port := strconv.Itoa(o.Port)
	zero := int32(0)
	one := int32(1)
	n := int32(o.Agents)
	indexed := batchv1.IndexedCompletion
	m := &Manifests{}
	m.Suite = &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta(o.Name+"-suite", "suite"),
		Data: map[string]string{SuiteKey: string(o.Suite)}}
	m.Service = &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta(coordName, "coordinator"),
		Spec: corev1.ServiceSpec{Selector: labels("coordinator"), Ports: []corev1.ServicePort{{Name: "agents", Port: int32(o.Port), TargetPort: intstr.FromInt32(int32(o.Port)), Protocol: corev1.ProtocolTCP}}}}

	coordPod := podSpec(o.Image, []string{"run", "/etc/benchrig/" + SuiteKey, "--agents", strconv.Itoa(o.Agents), "--listen", "0.0.0.0:" + port,
		"-o", "/tmp/results.json", "--log-results", "--join-for", o.JoinFor}, token, o.CoordinatorCPU, o.CoordinatorMemory)
	coordPod.Containers[0].Ports = []corev1.ContainerPort{{Name: "agents", ContainerPort: int32(o.Port), Protocol: corev1.ProtocolTCP}}
	coordPod.Volumes = append(coordPod.Volumes, corev1.Volume{Name: "suite", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: m.Suite.Name}}}})
	coordPod.Containers[0].VolumeMounts = append(coordPod.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "suite", MountPath: "/etc/benchrig", ReadOnly: true})
	m.Coordinator = &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta(coordName, "coordinator"),
		Spec: batchv1.JobSpec{Completions: &one, Parallelism: &one, BackoffLimit: &zero,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels("coordinator")}, Spec: coordPod}}}

	agentPod := podSpec(o.Image, []string{"agent", "--coordinator", coordName + ":" + port, "--dial-for", o.JoinFor}, token, o.AgentCPU, o.AgentMemory)
	agentPod.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: labels("agent")}, TopologyKey: "kubernetes.io/hostname"}}}}}
	m.Agents = &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta(agentsName, "agent"),
		Spec: batchv1.JobSpec{CompletionMode: &indexed, Completions: &n, Parallelism: &n, BackoffLimit: &zero,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels("agent")}, Spec: agentPod}}}
	return m, nil
}

// podSpec is a pod of one benchrig container: never restarted (a crashed
// agent is not silently replaced mid-run), non-root, read-only root with
// a writable /tmp.
func podSpec(image string, args []string, token corev1.EnvVar, cpu, mem string) corev1.PodSpec {
	no, yes := false, true
	uid := int64(65532)
	q := resource.MustParse
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name: "benchrig", Image: image, Args: args, Env: []corev1.EnvVar{token},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: q(cpu), corev1.ResourceMemory: q(mem)},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: q(mem)},
			},
			SecurityContext: &corev1.SecurityContext{RunAsNonRoot: &yes, RunAsUser: &uid, AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes},
			VolumeMounts:    []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
		}},
		Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
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

package k8s

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/benchrig/benchrig/internal/suite"
)

var update = flag.Bool("update", false, "rewrite the golden manifests")

const golden = "../../../deploy/manifests.golden.yaml"

const testSuite = `name: k8s-demo
seed: 1
repeats: 3
phases: {baseline: 1s, warmup: 5s, settle: 1s, load: 30s, recovery: 1s}
targets:
  web:
    address: {addr: "web.default.svc:8080"}
paths:
  root: {http: {url: "http://web.default.svc:8080/"}}
matrix: {targets: [web], paths: [root], connections: [64], rates: [20000]}
`

func testOptions(t *testing.T) Options {
	t.Helper()
	s, err := suite.Parse("k8s-demo.yaml", []byte(testSuite))
	if err != nil {
		t.Fatal(err)
	}
	resolved, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	return Options{Name: "k8s-demo", Namespace: "bench", Image: "registry.example/benchrig:v1", Agents: 4, Suite: resolved,
		TokenSecret: "k8s-demo-token", AgentCPU: "1", AgentMemory: "256Mi", CoordinatorCPU: "500m", CoordinatorMemory: "256Mi", JoinFor: "10m"}
}

// decoded are the rendered manifests read back strictly.
type decoded struct {
	cms  []corev1.ConfigMap
	svcs []corev1.Service
	jobs []batchv1.Job
}

// decodeStrict reads every document into its k8s.io/api type, refusing
// any field the type does not have. With same, each document written
// again by its type must be the document as written here (but for the
// empty status the types add): no field lost, renamed or read as another
// value (quantities in another form than the API server's are not).
func decodeStrict(t *testing.T, b []byte, same bool) decoded {
	t.Helper()
	var d decoded
	for i, doc := range strings.Split(string(b), "---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var head struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var o any
		switch head.Kind {
		case "ConfigMap":
			o = &corev1.ConfigMap{}
		case "Service":
			o = &corev1.Service{}
		case "Job":
			o = &batchv1.Job{}
		default:
			t.Fatalf("document %d: unexpected kind %q", i, head.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), o); err != nil {
			t.Fatalf("document %d (%s) does not decode strictly: %v", i, head.Kind, err)
		}
		switch o := o.(type) {
		case *corev1.ConfigMap:
			d.cms = append(d.cms, *o)
		case *corev1.Service:
			d.svcs = append(d.svcs, *o)
		case *batchv1.Job:
			d.jobs = append(d.jobs, *o)
		}
		if !same {
			continue
		}
		again, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		got := string(again)
		for _, status := range []string{"status:\n  loadBalancer: {}\n", "status: {}\n"} {
			got = strings.TrimSuffix(got, status)
		}
		if got != doc {
			t.Errorf("document %d (%s) written again by its k8s.io/api type differs:\n%s\nwritten here:\n%s", i, head.Kind, got, doc)
		}
	}
	return d
}

// render builds and writes the manifests of o.
func render(t *testing.T, o Options) *bytes.Buffer {
	t.Helper()
	m, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := m.Write(&b); err != nil {
		t.Fatal(err)
	}
	return &b
}

// TestManifests renders, compares with the golden file, decodes strictly
// and checks the invariants of a distributed run.
func TestManifests(t *testing.T) {
	o := testOptions(t)
	b := render(t, o)
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./internal/agent/k8s -update writes it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("manifests differ from %s (go test ./internal/agent/k8s -update if intended)", golden)
	}
	d := decodeStrict(t, want, true)
	if len(d.cms) != 1 || len(d.svcs) != 1 || len(d.jobs) != 2 {
		t.Fatalf("%d ConfigMaps, %d Services, %d Jobs; want 1, 1, 2", len(d.cms), len(d.svcs), len(d.jobs))
	}
	// the ConfigMap holds the resolved suite, which parses back.
	if _, err := suite.Parse("configmap", []byte(d.cms[0].Data[SuiteKey])); err != nil {
		t.Errorf("the ConfigMap's suite does not parse: %v", err)
	}
	var coord, agents *batchv1.Job
	for i := range d.jobs {
		switch d.jobs[i].Labels["app.kubernetes.io/component"] {
		case "coordinator":
			coord = &d.jobs[i]
		case "agent":
			agents = &d.jobs[i]
		}
	}
	if coord == nil || agents == nil {
		t.Fatal("no coordinator or agents Job")
	}
	as := agents.Spec
	if as.CompletionMode == nil || *as.CompletionMode != batchv1.IndexedCompletion {
		t.Error("agents: completionMode is not Indexed")
	}
	if as.Completions == nil || as.Parallelism == nil || *as.Completions != int32(o.Agents) || *as.Parallelism != int32(o.Agents) {
		t.Errorf("agents: completions %v parallelism %v, want both %d", as.Completions, as.Parallelism, o.Agents)
	}
	for name, j := range map[string]*batchv1.Job{"agents": agents, "coordinator": coord} {
		if j.Spec.BackoffLimit == nil || *j.Spec.BackoffLimit != 0 {
			t.Errorf("%s: backoffLimit %v, want 0 (a crashed pod is not replaced mid-run)", name, j.Spec.BackoffLimit)
		}
		pod := j.Spec.Template.Spec
		if pod.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s: restartPolicy %s", name, pod.RestartPolicy)
		}
		c := pod.Containers[0]
		if c.Image != o.Image || c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
			t.Errorf("%s: image %q, requests %v", name, c.Image, c.Resources.Requests)
		}
		tok := false
		for _, e := range c.Env {
			if e.Value != "" {
				t.Errorf("%s: env %s has a literal value", name, e.Name)
			}
			if e.Name == "BENCHRIG_AGENT_TOKEN" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
				e.ValueFrom.SecretKeyRef.Name == o.TokenSecret && e.ValueFrom.SecretKeyRef.Key == TokenKey {
				tok = true
			}
		}
		if !tok {
			t.Errorf("%s: the token does not come from Secret %s key %s", name, o.TokenSecret, TokenKey)
		}
	}
	aa := agents.Spec.Template.Spec.Affinity
	if aa == nil || aa.PodAntiAffinity == nil || len(aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 ||
		aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" {
		t.Error("agents: no pod anti-affinity over kubernetes.io/hostname")
	}
	// the agents reach the coordinator through the Service.
	svc := d.svcs[0]
	want2 := fmt.Sprintf("%s:%d", svc.Name, svc.Spec.Ports[0].Port)
	args := strings.Join(agents.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(args, "--coordinator "+want2) {
		t.Errorf("agents' args %q do not name the Service %s", args, want2)
	}
	for k, v := range svc.Spec.Selector {
		if coord.Spec.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, the coordinator's pod has %q", k, v, coord.Spec.Template.Labels[k])
		}
	}
	cargs := strings.Join(coord.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(cargs, fmt.Sprintf("--agents %d", o.Agents)) || !strings.Contains(cargs, "--log-results") {
		t.Errorf("coordinator args %q", cargs)
	}
}

func TestOptionsBounds(t *testing.T) {
	for _, c := range []struct {
		mut  func(*Options)
		want string
	}{
		{func(o *Options) { o.Name = "Bad_Name" }, "--name"},
		{func(o *Options) { o.Agents = 0 }, "--agents"},
		{func(o *Options) { o.Image = "" }, "--image"},
		{func(o *Options) { o.AgentCPU = "lots" }, "--agent-cpu"},
		{func(o *Options) { o.TokenSecret = "" }, "--token-secret"},
		{func(o *Options) { o.Port = 70000 }, "--port"},
	} {
		o := testOptions(t)
		c.mut(&o)
		if _, err := Build(o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one naming %s", err, c.want)
		}
	}
}

// TestEmitFetch: a results file survives a log with other lines around it
// and kubectl's --timestamps; a cut or altered block is refused.
func TestEmitFetch(t *testing.T) {
	data := []byte(strings.Repeat(`{"schema":"benchrig.results/v1","x":"é"}`+"\n", 50))
	var b bytes.Buffer
	b.WriteString("benchrig coordinator: listening\n[1/3] …\n")
	if err := Emit(&b, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	b.WriteString("done\n")
	got, err := Fetch(bytes.NewReader(b.Bytes()))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("fetch: %v (%d bytes, want %d)", err, len(got), len(data))
	}
	var ts strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		ts.WriteString("2026-12-01T15:00:00.000000000Z " + l + "\n")
	}
	if got, err := Fetch(strings.NewReader(ts.String())); err != nil || !bytes.Equal(got, data) {
		t.Errorf("fetch with timestamps: %v", err)
	}
	lines := strings.Split(b.String(), "\n")
	cut := strings.Join(lines[:len(lines)/2], "\n")
	if _, err := Fetch(strings.NewReader(cut)); err == nil {
		t.Error("a cut log was accepted")
	}
	altered := strings.Replace(b.String(), lines[3], strings.Repeat("A", len(lines[3])), 1)
	if _, err := Fetch(strings.NewReader(altered)); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Errorf("an altered block: %v", err)
	}
	if _, err := Fetch(strings.NewReader("nothing here\n")); err == nil {
		t.Error("a log without results was accepted")
	}
}

// TestManifestsQuantities: quantities written in other forms than the API
// server's own ("0.5", "1e9", "2.5Gi") reach the pods as the same values.
func TestManifestsQuantities(t *testing.T) {
	o := testOptions(t)
	o.AgentCPU, o.AgentMemory, o.CoordinatorCPU, o.CoordinatorMemory = "0.5", "1e9", ".25", "2.5Gi"
	b := render(t, o)
	d := decodeStrict(t, b.Bytes(), false)
	for _, j := range d.jobs {
		cpu, mem := o.AgentCPU, o.AgentMemory
		if j.Labels["app.kubernetes.io/component"] == "coordinator" {
			cpu, mem = o.CoordinatorCPU, o.CoordinatorMemory
		}
		r := j.Spec.Template.Spec.Containers[0].Resources
		for what, c := range map[string]struct {
			got  resource.Quantity
			want string
		}{"cpu request": {*r.Requests.Cpu(), cpu}, "memory request": {*r.Requests.Memory(), mem}, "memory limit": {*r.Limits.Memory(), mem}} {
			if c.got.Cmp(resource.MustParse(c.want)) != 0 {
				t.Errorf("%s: %s %s, want %s", j.Name, what, c.got.String(), c.want)
			}
		}
	}
}

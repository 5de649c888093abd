package k8s

// The objects of a run, as plain structs: the fields of the k8s.io/api
// types (core/v1 ConfigMap, Service, PodSpec; batch/v1 Job) that the
// manifests set, under the same JSON names. The binary does not link
// k8s.io/api and k8s.io/apimachinery: with them every run started 6–8 ms
// later (`perf stat -r 30 benchrig version`: 38.6–41.6 ms of CPU against
// 32.1–33.4). The tests decode every manifest strictly into those types
// and write it back, so a field named wrongly here fails them.

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

type objectMeta struct {
	Labels    map[string]string `json:"labels,omitempty"`
	Name      string            `json:"name,omitempty"`
	Namespace string            `json:"namespace,omitempty"`
}

// ConfigMap is a core/v1 ConfigMap.
type ConfigMap struct {
	typeMeta
	Metadata objectMeta        `json:"metadata"`
	Data     map[string]string `json:"data,omitempty"`
}

// Service is a core/v1 Service.
type Service struct {
	typeMeta
	Metadata objectMeta  `json:"metadata"`
	Spec     serviceSpec `json:"spec"`
}

type serviceSpec struct {
	Ports    []servicePort     `json:"ports"`
	Selector map[string]string `json:"selector"`
}

type servicePort struct {
	Name       string `json:"name"`
	Port       int32  `json:"port"`
	Protocol   string `json:"protocol"`
	TargetPort int32  `json:"targetPort"`
}

// Job is a batch/v1 Job.
type Job struct {
	typeMeta
	Metadata objectMeta `json:"metadata"`
	Spec     jobSpec    `json:"spec"`
}

type jobSpec struct {
	BackoffLimit   *int32      `json:"backoffLimit,omitempty"`
	CompletionMode string      `json:"completionMode,omitempty"`
	Completions    *int32      `json:"completions,omitempty"`
	Parallelism    *int32      `json:"parallelism,omitempty"`
	Template       podTemplate `json:"template"`
}

type podTemplate struct {
	Metadata objectMeta `json:"metadata"`
	Spec     podSpec    `json:"spec"`
}

type podSpec struct {
	Affinity      *affinity   `json:"affinity,omitempty"`
	Containers    []container `json:"containers"`
	RestartPolicy string      `json:"restartPolicy"`
	Volumes       []volume    `json:"volumes,omitempty"`
}

type affinity struct {
	PodAntiAffinity podAntiAffinity `json:"podAntiAffinity"`
}

type podAntiAffinity struct {
	Preferred []weightedTerm `json:"preferredDuringSchedulingIgnoredDuringExecution"`
}

type weightedTerm struct {
	PodAffinityTerm podAffinityTerm `json:"podAffinityTerm"`
	Weight          int32           `json:"weight"`
}

type podAffinityTerm struct {
	LabelSelector labelSelector `json:"labelSelector"`
	TopologyKey   string        `json:"topologyKey"`
}

type labelSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

type container struct {
	Args            []string        `json:"args"`
	Env             []envVar        `json:"env"`
	Image           string          `json:"image"`
	Name            string          `json:"name"`
	Ports           []containerPort `json:"ports,omitempty"`
	Resources       resources       `json:"resources"`
	SecurityContext securityContext `json:"securityContext"`
	VolumeMounts    []volumeMount   `json:"volumeMounts"`
}

type envVar struct {
	Name      string    `json:"name"`
	ValueFrom envSource `json:"valueFrom"`
}

type envSource struct {
	SecretKeyRef secretKeyRef `json:"secretKeyRef"`
}

type secretKeyRef struct {
	Key  string `json:"key"`
	Name string `json:"name"`
}

type containerPort struct {
	ContainerPort int32  `json:"containerPort"`
	Name          string `json:"name"`
	Protocol      string `json:"protocol"`
}

// resources are requests and limits as Kubernetes quantities (validated
// by parseQuantity, written as given).
type resources struct {
	Limits   map[string]string `json:"limits"`
	Requests map[string]string `json:"requests"`
}

type securityContext struct {
	AllowPrivilegeEscalation bool  `json:"allowPrivilegeEscalation"`
	ReadOnlyRootFilesystem   bool  `json:"readOnlyRootFilesystem"`
	RunAsNonRoot             bool  `json:"runAsNonRoot"`
	RunAsUser                int64 `json:"runAsUser"`
}

type volumeMount struct {
	MountPath string `json:"mountPath"`
	Name      string `json:"name"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
}

type volume struct {
	ConfigMap *configMapSource `json:"configMap,omitempty"`
	EmptyDir  *struct{}        `json:"emptyDir,omitempty"`
	Name      string           `json:"name"`
}

type configMapSource struct {
	Name string `json:"name"`
}

package suite

import "strconv"

// Target kinds: how benchrig gets hold of a system under test.
const (
	// KindCommand: benchrig starts Command as a fresh process per sample.
	KindCommand = "command"
	// KindPostgres: an ephemeral PostgreSQL server, or an existing one by DSN.
	KindPostgres = "postgres"
	// KindRedis: an ephemeral redis-server, or an existing one by address.
	KindRedis = "redis"
	// KindAttach: an already running process, found by PID or listening port.
	KindAttach = "attach"
	// KindAddress: a server reached at an address, neither started nor
	// sampled by benchrig (the path's URL or the address says where).
	KindAddress = "address"
)

// Target is one system under test. Exactly one of Command, Postgres, Redis
// and Attach is set.
type Target struct {
	// Command is the program and arguments of a command target. {port} and
	// {param} placeholders are substituted (see Params).
	Command []string `json:"command,omitempty"`
	// VersionCommand prints the runtime's version for the provenance (e.g.
	// ["node_modules/node16/bin/node", "--version"]); by default a Go
	// binary's build information is read and a known runtime (node,
	// python3, java…) asked, any other program's version being unknown
	// (package system/command). Placeholders are substituted; it runs in
	// Dir with Env, bounded by a timeout.
	VersionCommand []string `json:"version_command,omitempty"`
	// Dir is the working directory of Command (default: the current one).
	Dir string `json:"dir,omitempty"`
	// Env is added to the environment of Command, or of the ephemeral
	// server. Values may use placeholders.
	Env map[string]string `json:"env,omitempty"`
	// Port is the port the target listens on, substituted for {port}; 0
	// lets the runner pick a free port.
	Port int `json:"port,omitempty"`
	// CPUs pins the target; empty uses Placement.TargetCPUs.
	CPUs CPUList `json:"cpus,omitempty"`
	// Limits run a command target's process tree under CPU, memory and
	// pids limits, in a control group of its own per sample.
	Limits *Limits `json:"limits,omitempty"`
	// Params are axes of the matrix that belong to this target: each
	// combination of values is a separate variant, its values substituted
	// into {name} placeholders (e.g. params: {node: [node18, node20]} with
	// command: ["{node}", "server.js"]).
	Params map[string][]string `json:"params,omitempty"`
	// Serves overrides the protocols the target speaks; by default a
	// command or attach target serves http, postgres serves pg and redis
	// serves resp.
	Serves []Protocol `json:"serves,omitempty"`
	// Ready is how a command target is known to be ready.
	Ready *Ready `json:"ready,omitempty"`
	// Checks are HTTP requests whose responses must be right before and
	// after the load (the pre-flight and post-load checks).
	Checks []Check `json:"checks,omitempty"`
	// Assert are assertions (see ParseExpr) every sample of the target
	// must satisfy, over its counters and statistics deltas; one that
	// fails makes the sample UNHEALTHY.
	Assert []string `json:"assert,omitempty"`
	// Metrics is the target's own metrics endpoint (Prometheus text
	// format), scraped through every phase.
	Metrics *Metrics `json:"metrics,omitempty"`

	// Companions are further process trees sampled through every phase of
	// every sample of this target and recorded under their own names
	// beside it: another target of the suite (a database the target
	// uses), or a running process found by PID or listening port.
	Companions []Companion `json:"companions,omitempty"`
	// Headline names the process whose figures are the sample's "server
	// µs/request", cores and peak memory in reports: a companion's name,
	// or "" (the default) for the target itself.
	Headline string `json:"headline,omitempty"`

	// Postgres makes this a PostgreSQL target.
	Postgres *Postgres `json:"postgres,omitempty"`
	// Redis makes this a RESP (redis-server) target.
	Redis *Redis `json:"redis,omitempty"`
	// Attach makes this a target benchrig does not start.
	Attach *Attach `json:"attach,omitempty"`
	// Address makes this a target benchrig neither starts nor samples.
	Address *Address `json:"address,omitempty"`
}

// Address is a server benchrig only sends requests to: it is not started,
// stopped or sampled (its CPU and memory are not measured).
type Address struct {
	// Addr is host:port; for an http path the URL says where, and Addr may
	// be empty. Its port fills {port}.
	Addr string `json:"addr,omitempty"`
}

// Kind returns the target's kind (KindCommand, KindPostgres, KindRedis or
// KindAttach); "" for a target that names none.
func (t *Target) Kind() string {
	switch {
	case t.Postgres != nil:
		return KindPostgres
	case t.Redis != nil:
		return KindRedis
	case t.Attach != nil:
		return KindAttach
	case t.Address != nil:
		return KindAddress
	case t.Command != nil:
		return KindCommand
	}
	return ""
}

// Protocols returns the protocols the target serves: Serves when set, else
// the default of its kind.
func (t *Target) Protocols() []Protocol {
	if len(t.Serves) > 0 {
		return t.Serves
	}
	if c := Capabilities()[t.Kind()]; len(c) > 0 {
		return c[:1]
	}
	return nil
}

// Serve reports whether the target serves protocol p.
func (t *Target) Serve(p Protocol) bool {
	for _, q := range t.Protocols() {
		if q == p {
			return true
		}
	}
	return false
}

// Ready says how a started command target is known to accept requests. At
// most one of HTTP and TCP is set; with neither, the target is ready when
// its port accepts connections.
type Ready struct {
	// HTTP is a URL that must answer with a 2xx status.
	HTTP string `json:"http,omitempty"`
	// TCP is a host:port that must accept a connection.
	TCP string `json:"tcp,omitempty"`
	// Timeout bounds the wait (default 30s).
	Timeout Duration `json:"timeout"`
}

// Check is an HTTP request whose response is verified before and after the
// load.
type Check struct {
	// URL to request; placeholders are substituted.
	URL string `json:"url"`
	// Method (default GET).
	Method string `json:"method,omitempty"`
	// Body sent with the request.
	Body string `json:"body,omitempty"`
	// Status expected (default 200).
	Status int `json:"status"`
	// BodyEquals, when set, must equal the response body.
	BodyEquals string `json:"body_equals,omitempty"`
	// BodyContains, when set, must occur in the response body.
	BodyContains string `json:"body_contains,omitempty"`
}

// Postgres is a PostgreSQL target: an ephemeral server benchrig creates in a
// temporary directory (Ephemeral), or an existing one whose DSN is read from
// the environment variable DSNEnv, or given in DSN without a password.
type Postgres struct {
	// Ephemeral starts a new server in a temporary directory per run.
	Ephemeral bool `json:"ephemeral,omitempty"`
	// DSN of an existing server; must not contain a password (use DSNEnv
	// or PGPASSWORD).
	DSN string `json:"dsn,omitempty"`
	// DSNEnv names the environment variable holding the DSN.
	DSNEnv string `json:"dsn_env,omitempty"`
	// BinDir holds initdb and postgres for an ephemeral server (default:
	// found on PATH). Placeholders are substituted.
	BinDir string `json:"bin_dir,omitempty"`
	// SharedBuffers of an ephemeral server, in PostgreSQL syntax (128MB).
	SharedBuffers string `json:"shared_buffers,omitempty"`
	// MaxConnections of an ephemeral server (default: enough for the
	// largest connection count of the matrix).
	MaxConnections int `json:"max_connections,omitempty"`
	// Settings are further postgresql.conf settings of an ephemeral server.
	Settings map[string]string `json:"settings,omitempty"`
	// InitSQL statements run once, in order, after the dataset is
	// created (before the pre-flight, the statistics query and the
	// sidecar). They are not run again when the dataset is reset before
	// each sample (the reset truncates and reloads the table only, so the
	// functions and tables they created stay); put what must run before
	// every sample in ResetSQL.
	InitSQL []string `json:"init_sql,omitempty"`
	// ResetSQL statements run, in order, before every sample, after the
	// dataset's reset (e.g. zeroing a cache's counters).
	ResetSQL []string `json:"reset_sql,omitempty"`
	// Statistics is a query read before and after every sample's load
	// window (e.g. SELECT * FROM local_cache.stats()); the numeric
	// columns of its first row are recorded as deltas beside the
	// pg_stat_database ones, under their column names.
	Statistics string `json:"statistics,omitempty"`
	// RESP is the server's RESP endpoint, when it serves one beside SQL
	// (an extension's, or a sidecar's); the target then may serve resp.
	RESP *PGRESP `json:"resp,omitempty"`
	// Sidecar is a command started once the server is ready and stopped
	// before it, e.g. a RESP server that reads the database.
	Sidecar *Sidecar `json:"sidecar,omitempty"`
	// Table is the benchmark table (default items), created on an
	// ephemeral server and checked on a DSN server.
	Table string `json:"table,omitempty"`
	// PayloadBytes is the size of each row's payload column on an
	// ephemeral server (default 64).
	PayloadBytes int `json:"payload_bytes,omitempty"`
}

// PGRESP is the RESP endpoint of a PostgreSQL target. Exactly one of Addr
// and Port; the AUTH token comes from TokenEnv or TokenFile and is never
// recorded.
type PGRESP struct {
	// Addr is the endpoint's host:port.
	Addr string `json:"addr,omitempty"`
	// Port is the endpoint's port on 127.0.0.1 (an ephemeral server) or on
	// the DSN's host. With a sidecar, 0 picks a free port, given to the
	// sidecar's command and env as {port}.
	Port int `json:"port,omitempty"`
	// TokenEnv names the environment variable holding the AUTH token;
	// TokenFile a file holding it (at most one).
	TokenEnv  string `json:"token_env,omitempty"`
	TokenFile string `json:"token_file,omitempty"`
	// User is the ACL user of "AUTH user token".
	User string `json:"user,omitempty"`
	// TLS reaches the endpoint over TLS.
	TLS *RedisTLS `json:"tls,omitempty"`
	// VerifyAgainstPG compares, before the load, a probe batch read with
	// MGET under every resp path's key template with the same rows read
	// over SQL; a mismatch refuses the run and names the first key.
	VerifyAgainstPG bool `json:"verify_against_pg,omitempty"`
	// VerifyBatch bounds the keys of one pre-flight MGET (default: the
	// suite's largest resp batch, at most DefaultVerifyBatch): real servers
	// limit request and reply sizes.
	VerifyBatch int `json:"verify_batch,omitempty"`
	// Info names INFO fields (integers) recorded as deltas of every resp
	// sample, when the endpoint answers INFO.
	Info []string `json:"info,omitempty"`
}

// Sidecar is a command that runs beside a PostgreSQL server: started once
// the server is ready (dataset and init_sql done), stopped before the
// server, and sampled as part of the target. It is given the server's DSN
// in the environment variable DSNEnv, never on its command line.
type Sidecar struct {
	// Command is the program and its arguments; {port} is the RESP
	// endpoint's port ({id} is left as written, for a key template).
	Command []string `json:"command"`
	// Env is added to benchrig's environment for the command; values may
	// use {port}.
	Env map[string]string `json:"env,omitempty"`
	// DSNEnv names the variable the DSN is passed in (default BENCHRIG_DSN).
	DSNEnv string `json:"dsn_env,omitempty"`
	// Ready bounds the wait for the sidecar (default 30s): it is ready
	// when the RESP endpoint answers PING, or, without one, once started.
	Ready *Ready `json:"ready,omitempty"`
}

// DefaultVerifyBatch bounds a pre-flight MGET's keys when the suite sets
// no verify_batch (its largest resp batch, if smaller, bounds it too), and
// MaxVerifyBatch bounds verify_batch.
const (
	DefaultVerifyBatch = 128
	MaxVerifyBatch     = 1024
)

// DefaultSidecarDSNEnv is the variable a sidecar finds the DSN in.
const DefaultSidecarDSNEnv = "BENCHRIG_DSN"

// Redis is a RESP target: an ephemeral redis-server, or an existing server
// at Addr. The AUTH token, if any, is read from the environment variable
// TokenEnv; it is never written in a suite.
type Redis struct {
	// Ephemeral starts a new redis-server per run.
	Ephemeral bool `json:"ephemeral,omitempty"`
	// Addr is the host:port of an existing server.
	Addr string `json:"addr,omitempty"`
	// TokenEnv names the environment variable holding the AUTH token.
	TokenEnv string `json:"token_env,omitempty"`
	// TokenFile names a file holding the AUTH token (at most one of
	// TokenEnv and TokenFile).
	TokenFile string `json:"token_file,omitempty"`
	// User is the ACL user of "AUTH user token".
	User string `json:"user,omitempty"`
	// TLS reaches an existing server over TLS.
	TLS *RedisTLS `json:"tls,omitempty"`
	// MaxClients is an ephemeral server's maxclients (default: the
	// matrix's largest connection count + 32).
	MaxClients int `json:"max_clients,omitempty"`
	// Fill says whether benchrig writes the demo rows under every key
	// template before the run (default true). A server that serves its own
	// data says fill: false.
	Fill *bool `json:"fill,omitempty"`
	// FillFromPG fills the keys from a PostgreSQL table instead of the demo
	// rows (cache-aside).
	FillFromPG *FillFromPG `json:"fill_from_pg,omitempty"`
	// VerifyAgainstPG compares a probe batch read over RESP with the same
	// rows read over SQL before the load: those of fill_from_pg, or of
	// source_pg when the server fills itself (fill: false).
	VerifyAgainstPG bool `json:"verify_against_pg,omitempty"`
	// VerifyBatch bounds the keys of one pre-flight MGET (default: the
	// suite's largest resp batch, at most DefaultVerifyBatch).
	VerifyBatch int `json:"verify_batch,omitempty"`
	// SourcePG is the PostgreSQL table the rows of a server that fills
	// itself come from (fill: false), for verify_against_pg.
	SourcePG *FillFromPG `json:"source_pg,omitempty"`
	// Info names further INFO fields (integers) recorded as deltas of
	// every sample, beside keyspace_hits, keyspace_misses,
	// total_commands_processed and used_memory.
	Info []string `json:"info,omitempty"`
	// Bin is the redis-server program of an ephemeral server (default:
	// found on PATH). Placeholders are substituted.
	Bin string `json:"bin,omitempty"`
	// Settings are further redis.conf settings of an ephemeral server.
	Settings map[string]string `json:"settings,omitempty"`
}

// RedisTLS configures TLS to an existing RESP server.
type RedisTLS struct {
	// CA is a PEM file of certificates to trust instead of the system's.
	CA string `json:"ca,omitempty"`
	// ServerName is the name to verify (default the host of addr).
	ServerName string `json:"server_name,omitempty"`
}

// FillFromPG reads the rows a RESP target is filled with from PostgreSQL.
type FillFromPG struct {
	// Ephemeral starts a throwaway PostgreSQL server with the demo table.
	Ephemeral bool `json:"ephemeral,omitempty"`
	// DSNEnv names the environment variable holding the DSN of an
	// existing server.
	DSNEnv string `json:"dsn_env,omitempty"`
	// Table and PK name the table and its integer key (default items, id).
	Table string `json:"table,omitempty"`
	PK    string `json:"pk,omitempty"`
}

// Attach is a process benchrig does not start: exactly one of PID and Port
// finds it (the process listening on Port).
type Attach struct {
	// PID is the process id of the target (its whole tree is measured).
	PID int `json:"pid,omitempty"`
	// Port finds the process listening on it.
	Port int `json:"port,omitempty"`
	// Tree samples every process listening on Port (workers of one server,
	// SO_REUSEPORT or forked) through their nearest common ancestor's
	// tree, not the eldest one alone.
	Tree bool `json:"tree,omitempty"`
}

// Companion is a process tree sampled beside a target: exactly one of
// Target, PID and Port finds it.
type Companion struct {
	// Name labels the companion's figures (default: the target's name,
	// pid-N or port-N).
	Name string `json:"name,omitempty"`
	// Target names another target of the suite: a postgres, redis or
	// attach target, prepared once for the run (before this one) and
	// sampled as its own samples sample it.
	Target string `json:"target,omitempty"`
	// PID is a running process (its whole tree is sampled).
	PID int `json:"pid,omitempty"`
	// Port finds the process listening on it; Tree samples every process
	// listening there through their nearest common ancestor's tree.
	Port int  `json:"port,omitempty"`
	Tree bool `json:"tree,omitempty"`
	// DSNEnv, with a postgres Target and a command target, is the
	// environment variable the started command finds the companion's DSN
	// in (never on its command line), as a sidecar does.
	DSNEnv string `json:"dsn_env,omitempty"`
}

// CompanionName is the companion's label: Name, else the target's name,
// pid-N or port-N.
func (c Companion) CompanionName() string {
	switch {
	case c.Name != "":
		return c.Name
	case c.Target != "":
		return c.Target
	case c.PID != 0:
		return "pid-" + strconv.Itoa(c.PID)
	}
	return "port-" + strconv.Itoa(c.Port)
}

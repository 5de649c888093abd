package redisephemeral

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/secret"
)

// Options configures an ephemeral redis-server. The zero value works: it runs
// "redis-server" from PATH without a password.
type Options struct {
	// Bin is the redis-server executable: a path, or a name looked up on
	// PATH. Default "redis-server".
	Bin string `json:"bin,omitempty"`
	// Password, when not empty, is set as requirepass. It is never
	// serialized.
	Password secret.Value `json:"-"`
	// MaxClients sets maxclients; size it to the connections a run opens
	// plus a few for probes. 0 keeps redis's default (10000).
	MaxClients int `json:"max_clients,omitempty"`
	// TLSCertFile and TLSKeyFile, when both set, make the server speak
	// only TLS (tls-port instead of port) with this certificate. Clients
	// are not asked for certificates.
	TLSCertFile string `json:"tls_cert_file,omitempty"`
	TLSKeyFile  string `json:"tls_key_file,omitempty"`
	// ExtraConfig holds further redis.conf lines, e.g. "io-threads 2".
	ExtraConfig []string `json:"extra_config,omitempty"`
	// StartTimeout bounds the wait for the server to answer PING.
	StartTimeout time.Duration `json:"start_timeout,omitempty"`
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL.
	StopGrace time.Duration `json:"stop_grace,omitempty"`
}

// Defaults applied by Start to zero fields.
const (
	DefaultBin          = "redis-server"
	DefaultStartTimeout = 10 * time.Second
	DefaultStopGrace    = 5 * time.Second
)

// DefaultOptions returns the options a zero Options stands for.
func DefaultOptions() Options {
	return Options{Bin: DefaultBin, StartTimeout: DefaultStartTimeout, StopGrace: DefaultStopGrace}
}

// withDefaults fills zero fields and checks the rest.
func (o Options) withDefaults() (Options, error) {
	d := DefaultOptions()
	if o.Bin == "" {
		o.Bin = d.Bin
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = d.StartTimeout
	}
	if o.StopGrace <= 0 {
		o.StopGrace = d.StopGrace
	}
	if o.MaxClients < 0 {
		return o, fmt.Errorf("options: max_clients: must be 0 (redis default) or positive, got %d", o.MaxClients)
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return o, fmt.Errorf("options: tls_cert_file and tls_key_file must be set together")
	}
	for i, line := range o.ExtraConfig {
		if strings.ContainsAny(line, "\r\n") {
			return o, fmt.Errorf("options: extra_config[%d]: must be one line without CR or LF", i)
		}
	}
	return o, nil
}

// configFile renders redis.conf for a server in dir listening on port.
func (o Options) configFile(dir string, port int, logFile string) string {
	var b strings.Builder
	line := func(k string, v ...string) {
		b.WriteString(k)
		for _, s := range v {
			b.WriteByte(' ')
			b.WriteString(s)
		}
		b.WriteByte('\n')
	}
	line("bind", "127.0.0.1")
	if o.TLSCertFile != "" {
		line("port", "0")
		line("tls-port", strconv.Itoa(port))
		line("tls-cert-file", quote(o.TLSCertFile))
		line("tls-key-file", quote(o.TLSKeyFile))
		line("tls-auth-clients", "no")
	} else {
		line("port", strconv.Itoa(port))
	}
	line("daemonize", "no")
	line("protected-mode", "yes")
	line("save", `""`)
	line("appendonly", "no")
	line("dir", quote(dir))
	line("logfile", quote(logFile))
	if o.MaxClients > 0 {
		line("maxclients", strconv.Itoa(o.MaxClients))
	}
	for _, l := range o.ExtraConfig {
		if !secretDirective(l) {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// secretConfig renders the configuration lines that hold credentials
// (requirepass, and extra lines whose directive names a secret such as
// masterauth). They are given to redis-server on its standard input, never
// written to a file or put on its command line.
func (o Options) secretConfig() string {
	var b strings.Builder
	if !o.Password.IsZero() {
		b.WriteString("requirepass " + quote(o.Password.Reveal()) + "\n")
	}
	for _, l := range o.ExtraConfig {
		if secretDirective(l) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// secretDirective reports whether a redis.conf line's directive names a
// secret (requirepass, masterauth, …) by the policy of package secret.
func secretDirective(line string) bool {
	f := strings.Fields(line)
	return len(f) > 0 && secret.IsSecretName(f[0])
}

// quote renders s as a double-quoted redis.conf argument; redis's parser
// (sdssplitargs) understands \\, \" and \xHH inside double quotes.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

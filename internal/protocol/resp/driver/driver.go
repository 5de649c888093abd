package resp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"

	"github.com/benchrig/benchrig/internal/driver"
	wire "github.com/benchrig/benchrig/internal/resp"
	"github.com/benchrig/benchrig/internal/secret"
)

// Driver opens RESP2 connections to one server. It is safe for concurrent
// use; each Conn belongs to one worker.
type Driver struct {
	cfg     Config
	token   secret.Value
	tlsConf *tls.Config
	cmdName []byte   // "MGET", "GET", "SET"
	head    []byte   // MGET and GET: the array header and command name, encoded
	key     template // KeyTemplate
	value   template // SET value
	args    []template
	keys    func(seq uint64, i int) int64

	// keyTab holds keys 1…len(keyEnd) encoded as RESP bulk strings, key
	// id at keyTab[keyEnd[id-2]:keyEnd[id-1]] (from 0 for id 1); nil when
	// the key space is too large to encode ahead (see keyTableMax).
	keyTab []byte
	keyEnd []uint32
	ref    refTable // the Reference's values, when validating (buildReference)
	lim    wire.Limits
	// overLimit are the failure messages of a reply over each limit
	// (limitNames).
	overLimit [len(limitNames)]string

	hits, nils, validated, mismatches atomic.Int64
	sawServerError                    atomic.Bool

	mu          sync.Mutex
	firstServer string // first server error message seen, redacted
}

var (
	_ driver.Driver = (*Driver)(nil)
	_ driver.Conn   = (*conn)(nil)
)

// New checks cfg, fills its defaults, reads the AUTH token and the TLS CA
// file, and compiles the templates.
func New(cfg Config) (*Driver, error) {
	cfg, token, err := cfg.resolve()
	if err != nil {
		return nil, fmt.Errorf("resp: config: %w", err)
	}
	d := &Driver{cfg: cfg, token: token, keys: cfg.Keys, lim: limitsOf(cfg.Limits)}
	d.overLimit = overLimitMsgs(d.lim)
	if d.key, err = compileTemplate("key_template", cfg.KeyTemplate, cfg.DB, false); err != nil {
		return nil, fmt.Errorf("resp: config: %w", err)
	}
	if !d.key.has(holeID) && cfg.KeySpace > 1 {
		return nil, fmt.Errorf("resp: config: key_template: %q has no {id}, so every key would be the same", cfg.KeyTemplate)
	}
	switch cfg.Command {
	case CommandSET:
		if d.value, err = compileTemplate("value", cfg.Value, cfg.DB, false); err != nil {
			return nil, fmt.Errorf("resp: config: %w", err)
		}
	case CommandCustom:
		for i, a := range cfg.Args {
			t, err := compileTemplate(fmt.Sprintf("args[%d]", i), a, cfg.DB, true)
			if err != nil {
				return nil, fmt.Errorf("resp: config: %w", err)
			}
			d.args = append(d.args, t)
		}
	}
	d.cmdName = []byte(cfg.Command)
	switch cfg.Command {
	case CommandMGET:
		d.head = wire.AppendBulk(wire.AppendArrayHeader(nil, 1+cfg.Batch), d.cmdName)
		d.encodeKeys()
	case CommandGET:
		d.head = wire.AppendBulk(wire.AppendArrayHeader(nil, 2), d.cmdName)
		d.encodeKeys()
	}
	if d.keys == nil {
		batch, space := uint64(cfg.Batch), uint64(cfg.KeySpace)
		d.keys = func(seq uint64, i int) int64 { return int64((seq*batch+uint64(i))%space) + 1 }
	}
	d.buildReference()
	if cfg.TLS.Enabled {
		if d.tlsConf, err = cfg.TLS.build(); err != nil {
			return nil, fmt.Errorf("resp: config: %w", err)
		}
	}
	return d, nil
}

// keyTableMax bounds the table of encoded keys: a key space whose keys
// take more is rendered key by key on the hot path instead.
const keyTableMax = 4 << 20

// encodeKeys encodes keys 1…KeySpace ahead, so that building a request
// copies each key instead of rendering it ("$7\r\nitem:42\r\n").
// Addr is the server's "host:port".
func (d *Driver) Addr() string { return d.cfg.Addr }

func (d *Driver) encodeKeys() {
	if d.cfg.KeySpace > keyTableMax/8 {
		return
	}
	var tab, key []byte
	ends := make([]uint32, 0, d.cfg.KeySpace)
	for id := int64(1); id <= d.cfg.KeySpace; id++ {
		key = d.key.appendTo(key[:0], id, nil)
		tab = wire.AppendBulk(tab, key)
		if len(tab) > keyTableMax {
			return
		}
		ends = append(ends, uint32(len(tab)))
	}
	d.keyTab, d.keyEnd = tab, ends
}

// encodedKey returns key id encoded as a bulk string, or nil when the table
// does not hold it.
func (d *Driver) encodedKey(id int64) []byte {
	if id < 1 || id > int64(len(d.keyEnd)) {
		return nil
	}
	start := uint32(0)
	if id > 1 {
		start = d.keyEnd[id-2]
	}
	return d.keyTab[start:d.keyEnd[id-1]:d.keyEnd[id-1]]
}

// appendKeyRun appends the n keys id, id+1, … (1 after KeySpace) from the
// table of encoded keys, which holds every key: they lie side by side in it,
// so the run is copied in one piece, or a few when it wraps around.
func (d *Driver) appendKeyRun(dst []byte, id int64, n int) []byte {
	space := int64(len(d.keyEnd))
	for n > 0 {
		k := min(int64(n), space-id+1)
		start := uint32(0)
		if id > 1 {
			start = d.keyEnd[id-2]
		}
		dst = append(dst, d.keyTab[start:d.keyEnd[id+k-2]]...)
		n -= int(k)
		id = 1
	}
	return dst
}

// build makes the crypto/tls configuration.
func (t TLSConfig) build() (*tls.Config, error) {
	c := &tls.Config{
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify, //nolint:gosec // the user asked for it
		MinVersion:         tls.VersionTLS12,
	}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls.ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls.ca_file: %s holds no PEM certificate", t.CAFile)
		}
		c.RootCAs = pool
	}
	return c, nil
}

// Config returns the resolved configuration (defaults filled in), for the
// results file. It holds no secret.
func (d *Driver) Config() Config { return d.cfg }

// Name returns "resp".
func (d *Driver) Name() string { return "resp" }

// Ops returns ["request"]: the driver performs one kind of operation.
func (d *Driver) Ops() []string { return []string{"request"} }

// MaxPipeline returns how many operations one Do accepts.
func (d *Driver) MaxPipeline() int { return MaxPipeline }

// Stats are the driver's counters, summed over all its connections.
type Stats struct {
	// Hits counts values found (non-nil bulk replies to GET or MGET).
	Hits int64 `json:"hits"`
	// Nils counts keys not found (nil bulk replies).
	Nils int64 `json:"nils"`
	// Validated counts values compared with the Reference.
	Validated int64 `json:"validated"`
	// Mismatches counts validated values that differed.
	Mismatches int64 `json:"mismatches"`
	// FirstServerError is the first server error reply seen, in full
	// (Outcome.Msg carries only its code, such as "WRONGTYPE").
	FirstServerError string `json:"first_server_error,omitempty"`
}

// Stats returns the counters so far. Each connection adds its counts at the
// end of every Do.
func (d *Driver) Stats() Stats {
	d.mu.Lock()
	first := d.firstServer
	d.mu.Unlock()
	return Stats{
		Hits:             d.hits.Load(),
		Nils:             d.nils.Load(),
		Validated:        d.validated.Load(),
		Mismatches:       d.mismatches.Load(),
		FirstServerError: first,
	}
}

// noteServerError remembers the first server error message.
func (d *Driver) noteServerError(msg []byte) {
	d.mu.Lock()
	if d.firstServer == "" {
		d.firstServer = d.redact(string(msg))
	}
	d.mu.Unlock()
}

// redact removes the AUTH token from text that may have come from the
// peer, where it stands as a whole token (secret.Scrub: never inside other
// words).
func (d *Driver) redact(s string) string {
	if d.token.IsZero() {
		return s
	}
	return secret.Scrub(s, d.token.Reveal())
}

// Open dials the server, completes TLS, AUTH and a PING within DialTimeout,
// and returns the worker's connection. Any failure here is a setup error.
func (d *Driver) Open(ctx context.Context, worker int) (driver.Conn, error) {
	c, err := d.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("resp: worker %d: %w", worker, err)
	}
	return c, nil
}

// dial opens a connection as Open does: dial, TLS, AUTH and PING within
// DialTimeout. An event loop takes its socket over then (loopconn_linux.go).
func (d *Driver) dial(ctx context.Context) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.DialTimeout)
	defer cancel()
	var dialer net.Dialer
	nc, err := dialer.DialContext(ctx, "tcp", d.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", d.cfg.Addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	if d.tlsConf != nil {
		tc := tls.Client(nc, d.tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", d.cfg.Addr, err)
		}
		nc = tc
	}
	c := newConn(d, nc)
	if err := c.handshake(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("%s: %w", d.cfg.Addr, err)
	}
	nc.SetDeadline(c.deadline) // zero: none until Do arms one
	return c, nil
}

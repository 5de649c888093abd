package history

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/result"
)

// MaxFileBytes bounds a results file that add reads whole.
const MaxFileBytes = 1 << 30

// MaxBranch bounds a branch label, in bytes.
const MaxBranch = 200

// DefaultBranch is the branch of a run whose targets record none.
const DefaultBranch = "default"

// Added is what Add did with one file.
type Added struct {
	Path string
	// Run is the run's id: new, or the one already imported.
	Run     int64
	Samples int
	// Already is true when the file had been imported (nothing added).
	Already bool
}

// AddOptions say how files are imported.
type AddOptions struct {
	// Branch labels the runs; "" takes DefaultBranch (results files record
	// the targets' git revision and dirtiness, not a branch).
	Branch string
	// Replan re-expands a recorded suite for verification, as `benchrig
	// verify` does.
	Replan result.Replanner
}

// CheckBranch refuses a branch label that is empty, too long or holds a
// control character.
func CheckBranch(b string) error {
	if b == "" || len(b) > MaxBranch || strings.ContainsFunc(b, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("--branch %q: accepted 1–%d bytes without control characters", b, MaxBranch)
	}
	return nil
}

// Add imports the results file at path in one transaction: verified first
// (result.CheckReader of the very bytes stored), refused with the
// verification's reason when it does not verify, "already imported" when
// a file of the same SHA-256 is in the database.
func (s *Store) Add(ctx context.Context, path string, o AddOptions) (*Added, error) {
	branch := o.Branch
	if branch == "" {
		branch = DefaultBranch
	}
	if err := CheckBranch(branch); err != nil {
		return nil, err
	}
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	c := result.CheckReader(path, bytes.NewReader(data), o.Replan)
	rep := c.Report
	if c.Header != nil && c.Header.Smoke {
		rep.Problems = append(rep.Problems, "smoke results: a smoke run proves the suite works, its figures are not results")
	}
	if !rep.OK() {
		// the notice names the file: "FAILED verification: PATH", a line per problem.
		return nil, fmt.Errorf("not imported: %s", strings.Join(rep.Notice(path, false), "\n"))
	}
	sum := sha256.Sum256(data)
	r := newRunRow(path, data, hex.EncodeToString(sum[:]), branch, c)
	for attempt := 1; ; attempt++ {
		if id, ok, err := s.runBySHA(ctx, r.sha); err != nil {
			return nil, s.errf("%w", err)
		} else if ok {
			return &Added{Path: path, Run: id, Samples: len(c.Samples), Already: true}, nil
		}
		id, err := s.insert(ctx, r, c.Samples)
		if err == nil {
			return &Added{Path: path, Run: id, Samples: len(c.Samples)}, nil
		}
		// another importer may have taken the file's key: the next look
		// finds its run. A lost race is tried again, within a bound.
		if attempt >= maxRetries || !s.retryable(err) && !isUnique(err) {
			return nil, s.errf("import %s: %w", path, err)
		}
		pause(ctx, attempt)
	}
}

// isUnique reports whether err is a unique-key violation.
func isUnique(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "UNIQUE constraint failed") || strings.Contains(msg, "SQLSTATE 23505")
}

// readBounded reads a whole results file of at most MaxFileBytes.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes (%d MiB), the bound of a results file history reads: not imported", path, MaxFileBytes, MaxFileBytes>>20)
	}
	return data, nil
}

// runRow is a run as stored.
type runRow struct {
	sha, name, suite, suiteHash, suiteFile, branch, revision, tool string
	started, finished                                              time.Time
	original                                                       []byte
	size                                                           int64
	host                                                           hostRow
	targets                                                        []targetRow
}

type hostRow struct {
	fingerprint, cpu, kernel, hostname string
	cores                              int
}

type targetRow struct {
	name, kind, rev, sha, version string
	dirty                         bool
}

func newRunRow(path string, data []byte, sha, branch string, c *result.Checked) *runRow {
	h := c.Header
	resolved := sha256.Sum256(h.Suite.Resolved)
	r := &runRow{sha: sha, name: filepath.Base(path), suite: h.Suite.Name, suiteHash: hex.EncodeToString(resolved[:]),
		suiteFile: h.Suite.SHA256, branch: branch, tool: h.Tool.Version, started: h.Started, size: int64(len(data)),
		host: hostOf(h.Host)}
	if c.Footer != nil {
		r.finished = c.Footer.Finished
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data) // a bytes.Buffer takes every byte
	zw.Close()
	r.original = buf.Bytes()
	for _, n := range slices.Sorted(maps.Keys(h.Targets)) {
		p := h.Targets[n]
		r.targets = append(r.targets, targetRow{name: n, kind: p.Kind, rev: p.GitRev, dirty: p.GitDirty, sha: p.SHA256, version: p.Version})
	}
	r.revision = revisionOf(r.targets)
	return r
}

// hostOf is the fingerprint of a recorded host: CPU model, online cores
// and kernel (not the hostname: CI runners of one kind share figures).
func hostOf(h *result.Host) hostRow {
	if h == nil {
		h = &result.Host{}
	}
	sum := sha256.Sum256([]byte(h.CPUModel + "\x00" + strconv.Itoa(h.OnlineCPUs) + "\x00" + h.Kernel))
	return hostRow{fingerprint: hex.EncodeToString(sum[:6]), cpu: h.CPUModel, cores: h.OnlineCPUs, kernel: h.Kernel, hostname: h.Hostname}
}

// revisionOf names what a run measured: its targets' git revisions (12
// digits, "+dirty" when the tree had changes), else their binaries'
// SHA-256, else "-".
func revisionOf(ts []targetRow) string {
	seen := map[string]bool{}
	var out []string
	add := func(v string) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, t := range ts {
		if t.rev != "" {
			v := t.rev[:min(12, len(t.rev))]
			if t.dirty {
				v += "+dirty"
			}
			add(v)
		}
	}
	if len(out) == 0 {
		for _, t := range ts {
			if t.sha != "" {
				add("sha256:" + t.sha[:min(12, len(t.sha))])
			}
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ",")
}

// runBySHA finds the run imported from a file of this SHA-256.
func (s *Store) runBySHA(ctx context.Context, sha string) (int64, bool, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT id FROM runs WHERE file_sha256 = ?`), sha).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// insert writes one run and its samples in one transaction.
func (s *Store) insert(ctx context.Context, r *runRow, samples []result.Sample) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	h := r.host
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO hosts (fingerprint, cpu_model, cores, kernel, hostname) VALUES (?, ?, ?, ?, ?) ON CONFLICT (fingerprint) DO NOTHING`),
		h.fingerprint, h.cpu, h.cores, h.kernel, h.hostname); err != nil {
		return 0, err
	}
	var id int64
	err = tx.QueryRowContext(ctx, s.q(`INSERT INTO runs (file_sha256, file_name, file_size, original, suite, suite_hash, suite_file_sha256, branch, host, started, started_ns, finished, revision, tool_version, samples, imported)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		r.sha, r.name, r.size, r.original, r.suite, r.suiteHash, r.suiteFile, r.branch, h.fingerprint,
		stamp(r.started), r.started.UnixNano(), stamp(r.finished), r.revision, r.tool, len(samples), stamp(time.Now())).Scan(&id)
	if err != nil {
		return 0, err
	}
	for _, t := range r.targets {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO targets (run_id, name, kind, git_revision, git_dirty, binary_sha256, version) VALUES (?, ?, ?, ?, ?, ?, ?)`),
			id, t.name, t.kind, t.rev, boolInt(t.dirty), t.sha, t.version); err != nil {
			return 0, err
		}
	}
	stmt, err := tx.PrepareContext(ctx, s.q(`INSERT INTO samples (run_id, sample_key, cell, variant, case_label, rep, started, error,
		req_per_sec, p50_us, p90_us, p99_us, max_us, server_us_per_req, peak_mem_bytes, client_cores, errors, latency_hist, service_hist)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	for i := range samples {
		if _, err := stmt.ExecContext(ctx, sampleArgs(id, &samples[i])...); err != nil {
			return 0, fmt.Errorf("sample %s: %w", samples[i].Key, err)
		}
	}
	return id, tx.Commit()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sampleArgs are one sample's columns: a failed sample keeps its reason
// and no figures (NULL).
func sampleArgs(run int64, sm *result.Sample) []any {
	args := []any{run, sm.Key, sm.Cell, sm.Variant, sm.Case, sm.Repeat, stamp(sm.Started), sm.Error}
	l := sm.Load
	if sm.Error != "" || l == nil {
		args = append(args, nil, nil, nil, nil, nil, nil, nil, nil, nil)
		return append(args, "", "")
	}
	var usPerReq, peak any
	if sm.Server != nil {
		usPerReq = sm.Server.Figures.MicrosPerRequest
		peak = int64(min(sm.Server.Figures.RSSPeak, 1<<62))
	}
	service := ""
	if l.Service != nil {
		service = l.Service.Histogram
	}
	return append(args, l.RequestsPerSec, l.Latency.P(50), l.Latency.P(90), l.Latency.P(99), l.Latency.MaxUS,
		usPerReq, peak, l.Client.Cores, l.Errors+l.Timeouts+l.Unexpected, l.Latency.Histogram, service)
}

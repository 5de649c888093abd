package k8s

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The markers around a results file in a pod's log. The END line carries
// the SHA-256 of the decoded file, so a log cut short or mixed with other
// lines is refused rather than half-recovered.
const (
	BeginMarker = "-----BEGIN BENCHRIG RESULTS-----"
	endPrefix   = "-----END BENCHRIG RESULTS sha256="
	endSuffix   = "-----"
	lineWidth   = 76
)

// MaxResults bounds a results file recovered from a log.
const MaxResults = 1 << 30

// Emit writes the results file r to w between the markers, base64 in lines
// of 76 characters (log collectors split or drop longer lines).
func Emit(w io.Writer, r io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(r, MaxResults+1))
	if err != nil {
		return err
	}
	if len(data) > MaxResults {
		return fmt.Errorf("results file larger than %d bytes", MaxResults)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, BeginMarker)
	enc := base64.StdEncoding.EncodeToString(data)
	for len(enc) > 0 {
		n := min(lineWidth, len(enc))
		fmt.Fprintln(bw, enc[:n])
		enc = enc[n:]
	}
	sum := sha256.Sum256(data)
	fmt.Fprintln(bw, endPrefix+hex.EncodeToString(sum[:])+endSuffix)
	return bw.Flush()
}

// Fetch recovers the results file from a log (kubectl logs of the
// coordinator's pod): the last marked block, decoded and checked against
// its SHA-256. Lines outside the markers are ignored; a kubectl
// --timestamps prefix is stripped.
func Fetch(r io.Reader) ([]byte, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var (
		in     bool
		body   strings.Builder
		result []byte
		found  bool
	)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "-----"); i > 0 && (strings.Contains(line, BeginMarker) || strings.Contains(line, endPrefix)) {
			line = line[i:]
		} else if in {
			if f := strings.Fields(line); len(f) == 2 { // "2026-12-01T15:00:00Z BASE64"
				line = f[1]
			}
		}
		switch {
		case line == BeginMarker:
			in = true
			body.Reset()
		case in && strings.HasPrefix(line, endPrefix) && strings.HasSuffix(line, endSuffix):
			in = false
			want := strings.TrimSuffix(strings.TrimPrefix(line, endPrefix), endSuffix)
			data, err := base64.StdEncoding.DecodeString(body.String())
			if err != nil {
				return nil, fmt.Errorf("the marked results are not base64: %w", err)
			}
			sum := sha256.Sum256(data)
			if hex.EncodeToString(sum[:]) != want {
				return nil, fmt.Errorf("the marked results do not match their SHA-256 (%s): the log is cut or mixed with other lines", want)
			}
			result, found = data, true
		case in:
			if body.Len()+len(line) > MaxResults*4/3+4 {
				return nil, fmt.Errorf("marked results larger than %d bytes", MaxResults)
			}
			body.WriteString(line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	if in {
		return nil, errors.New("the log ends inside the results (no END marker): the coordinator did not finish, or the log was cut")
	}
	if !found {
		return nil, fmt.Errorf("no results in the log (no %s line): did the coordinator run with --log-results and finish?", BeginMarker)
	}
	return bytes.Clone(result), nil
}

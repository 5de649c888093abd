package k8s

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// EmitFile prints the results file at path to w between the markers (run
// --log-results: a completed pod's files cannot be copied out, its log
// can).
func EmitFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return Emit(w, f)
}

// FetchFile recovers the results file from the log named by args (k8s
// fetch [LOG]: a file, or stdin when none or "-") into out, which must
// not exist, and returns its size.
func FetchFile(args []string, stdin io.Reader, out string) (int, error) {
	in := stdin
	if len(args) == 1 && args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			return 0, err
		}
		defer f.Close()
		in = f
	}
	data, err := Fetch(in)
	if err != nil {
		return 0, err
	}
	if _, err := os.Stat(out); err == nil {
		return 0, fmt.Errorf("%s exists: not overwriting it (remove it or give another -o)", out)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return 0, err
	}
	return len(data), nil
}

// DNSLabel makes a Kubernetes object name of a suite name.
func DNSLabel(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 40 {
		out = strings.Trim(out[:40], "-")
	}
	if out == "" {
		out = "benchrig"
	}
	return out
}

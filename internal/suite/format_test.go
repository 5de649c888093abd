package suite_test

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestFormatGolden compares `benchrig plan` output with golden files; run
// `go test -update` to rewrite them after a deliberate change.
func TestFormatGolden(t *testing.T) {
	for _, c := range []struct {
		suite, golden string
		smoke         bool
	}{
		{"testdata/http-frameworks.yaml", "testdata/http-frameworks.plan.golden", false},
		{"testdata/http-frameworks.yaml", "testdata/http-frameworks.smoke.golden", true},
	} {
		p, err := mustLoad(t, c.suite).Plan()
		if err != nil {
			t.Fatal(err)
		}
		if c.smoke {
			p = p.Smoke()
		}
		var b bytes.Buffer
		if err := p.Format(&b); err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(c.golden, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(c.golden)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%s differs:\n%s", c.golden, b.String())
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestFormatWriteError(t *testing.T) {
	p, err := mustLoad(t, "testdata/http-frameworks.yaml").Plan()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Format(failWriter{}); err == nil {
		t.Error("Format ignored a write error")
	}
}

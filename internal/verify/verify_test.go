package verify

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyJSON checks the document verify --json writes for a good and
// a tampered file.
func TestVerifyJSON(t *testing.T) {
	for name, want := range map[string]string{"closed": "ok", "tampered": "failed"} {
		path := filepath.Join("..", "report", "testdata", "results", name+".json")
		c, err := Check(path)
		if err != nil {
			t.Fatal(err)
		}
		rep := c.Report
		var buf bytes.Buffer
		if err := WriteJSON(&buf, path, rep); err != nil {
			t.Fatal(err)
		}
		var d Doc
		if err := json.Unmarshal(buf.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		if d.Schema != Schema || d.Verdict != want || d.Samples != 8 || d.Planned != 8 {
			t.Errorf("%s: %+v, want verdict %s of 8 samples", name, d, want)
		}
		if want == "failed" && (len(d.Problems) == 0 || !strings.Contains(d.Problems[0], "checksum mismatch")) {
			t.Errorf("%s: problems %q, want the checksum mismatch", name, d.Problems)
		}
	}
}

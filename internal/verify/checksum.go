package verify

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Checksum writes PATH.sha256 in sha256sum's format ("HEX  NAME"), as seed
// 002 publishes its results, or checks PATH against it. A file that does
// not verify (tampered, partial, inconsistent) gets no checksum: publishing
// one would vouch for it.
func Checksum(path string, check bool, stdout io.Writer) error {
	if !check {
		if v := Notice(path); v != "" {
			return fmt.Errorf("%s does not verify, so it gets no checksum to publish:\n%s", path, strings.TrimRight(v, "\n"))
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	side := path + ".sha256"
	if check {
		b, err := os.ReadFile(side)
		if err != nil {
			return err
		}
		want, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		if want != sum {
			return fmt.Errorf("%s: SHA-256 %s, but %s says %s", path, sum, side, want)
		}
		fmt.Fprintf(stdout, "%s: OK\n", path)
		return nil
	}
	line := fmt.Sprintf("%s  %s\n", sum, filepath.Base(path))
	if err := os.WriteFile(side, []byte(line), 0o644); err != nil {
		return err
	}
	fmt.Fprint(stdout, line)
	return nil
}

package suite

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// Load reads and parses the suite file at path. Errors name the file and,
// for problems in it, the line and column.
func Load(path string) (*Suite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read suite %q: %w", path, err)
	}
	defer f.Close()
	// One byte past the bound is enough for Parse to refuse the size.
	data, err := io.ReadAll(io.LimitReader(f, MaxSuiteBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read suite %q: %w", path, err)
	}
	return Parse(path, data)
}

// utf8BOM is the UTF-8 encoding of the byte-order mark U+FEFF.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Parse decodes and validates a suite. name is the file name used in error
// messages and recorded in Source. Unknown keys, wrong types, duplicate keys
// and invalid values are errors; the returned error is an Errors listing
// each as `name:line:col: field: what is wrong and what is accepted`.
func Parse(name string, data []byte) (*Suite, error) {
	s := newSuite()
	s.loc = newLocated(name)
	// A UTF-8 byte-order mark (Windows editors write one) is not content:
	// positions are counted after it, as editors show them.
	decodeDocument(s.loc, bytes.TrimPrefix(data, utf8BOM), s)
	if err := s.loc.result(); err != nil {
		return nil, err
	}
	s.applyDefaults()
	s.validate()
	if err := s.loc.result(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	s.Source = Source{File: name, SHA256: hex.EncodeToString(sum[:])}
	return s, nil
}

// applyDefaults fills the defaults that depend on what the file wrote.
func (s *Suite) applyDefaults() {
	for name, t := range s.Targets {
		if t != nil {
			s.targetDefaults(name, t)
		}
	}
	for name, p := range s.Paths {
		if p != nil {
			s.pathDefaults(name, p)
		}
	}
	for name, w := range s.Workloads {
		if w != nil {
			s.workloadDefaults(name, w)
		}
	}
}

package main

import (
	"slices"
	"testing"
)

// The fixture module has one file of each kind footprint counts, and one
// (internal/c, internal/suite/other.go) that only says "resp" and "http" in
// strings, comments and a readiness field.
func TestFootprintCountsUsesNotWords(t *testing.T) {
	t.Chdir("testdata/fixture")
	got, home, err := footprint("resp")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"README.md", "internal/a/a.go", "internal/b/b.go", "internal/d/d.go", "internal/e/e.go", "internal/suite/suite.go"}
	if home != "internal/driver/resp" || !slices.Equal(got, want) {
		t.Errorf("footprint resp = %q (home %s), want %q (home internal/driver/resp)", got, home, want)
	}
	if _, _, err := footprint("grpc"); err == nil {
		t.Error("footprint grpc: no error for a protocol without a directory")
	}
}

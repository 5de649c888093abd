package message

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// helloRequest is the greeter's request type.
func helloRequest(t testing.TB) protoreflect.MessageDescriptor {
	t.Helper()
	m, err := greeter(t).Method("benchrig.test.v1.Greeter/SayHello")
	if err != nil {
		t.Fatal(err)
	}
	return m.Desc.Input()
}

// prefixed makes a gRPC message of flag and payload.
func prefixed(flag byte, payload []byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{flag}, uint32(len(payload))), payload...)
}

// writeFile writes data to a file of the test's directory.
func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "msgs.bin")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadMessages(t *testing.T) {
	md := helloRequest(t)
	tmpl, err := NewTemplate(md, `{"name": "user-{id}", "id": {id}}`)
	if err != nil {
		t.Fatal(err)
	}
	var file []byte
	var want [][]byte
	for _, id := range []int64{1, 22, 333} {
		m := tmpl.Append(nil, id)
		want = append(want, m)
		file = append(file, m...)
	}
	// An empty message is a message too.
	want = append(want, []byte{0, 0, 0, 0, 0})
	file = append(file, 0, 0, 0, 0, 0)
	p := writeFile(t, file)
	got, err := ReadMessages(p, md, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("ReadMessages: %d messages, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("message %d: % x, want % x", i+1, got[i], want[i])
		}
		if cap(got[i]) != len(got[i]) {
			t.Errorf("message %d: cap %d > len %d (an append would overwrite the next)", i+1, cap(got[i]), len(got[i]))
		}
	}

	off3 := len(want[0]) + len(want[1]) // the third message's offset
	unprefixed := []byte{0x0a, 3, 'b', 'o', 'b'}
	for _, c := range []struct {
		name string
		data []byte
		max  int
		want string
	}{
		{"empty", nil, 10, "no message (the file is empty)"},
		{"truncated", file[:off3+len(want[2])-1], 10, fmt.Sprintf("message 3 at offset %d: a length prefix says 13 bytes, the file has 12 after it", off3)},
		{"truncated prefix", file[:off3+3], 10, fmt.Sprintf("message 3 at offset %d: 3 bytes left, want a 5-byte length prefix", off3)},
		{"over the bound", append(file[:off3:off3], 0, 0, 0x40, 0, 1), 10, fmt.Sprintf("message 3 at offset %d: a length prefix says 4194305 bytes, over the bound of 4194304", off3)},
		{"too many", file, 2, fmt.Sprintf("message 3 at offset %d: more than 2 messages, the bound", off3)},
		{"compressed", append(file[:off3:off3], prefixed(1, []byte{0x10, 1})...), 10, fmt.Sprintf("message 3 at offset %d: flag byte 1, want 0 (uncompressed)", off3)},
		{"undecodable", append(file[:off3:off3], prefixed(0, []byte{0x10})...), 10,
			fmt.Sprintf("message 3 at offset %d: does not decode as benchrig.test.v1.HelloRequest: ", off3)},
		{"unprefixed", unprefixed, 10, "message 1 at offset 0: a length prefix says 56782690 bytes, over the bound of 4194304 (" + prefixHint + ")"},
		{"short unprefixed", []byte{0x10, 1}, 10, "message 1 at offset 0: 2 bytes left, want a 5-byte length prefix (" + prefixHint + ")"},
	} {
		p := writeFile(t, c.data)
		_, err := ReadMessages(p, md, c.max)
		if want := p + ": " + c.want; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: ReadMessages error\n%v\nwant one starting\n%s", c.name, err, want)
		}
	}
	if _, err := ReadMessages(p, md, 0); err == nil || err.Error() != p+": the bound of messages is 0, want 1 or more" {
		t.Errorf("ReadMessages with max 0: %v", err)
	}
	if _, err := ReadMessages(filepath.Join(t.TempDir(), "none.bin"), md, 1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadMessages of no file: %v", err)
	}
}

// TestReadMessagesFileBound: a file over MaxMessagesFile is refused before
// it is read.
func TestReadMessagesFileBound(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.bin")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxMessagesFile + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ReadMessages(p, helloRequest(t), 10)
	if want := p + ": 268435457 bytes, over the bound of 268435456"; err == nil || err.Error() != want {
		t.Errorf("ReadMessages of a file over the bound: %v, want %q", err, want)
	}
}

// part is one message Split walked.
type part struct {
	compressed bool
	msg        string
}

// split collects the messages Split walks.
func split(body []byte, max int) ([]part, error) {
	var parts []part
	err := Split(body, max, func(compressed bool, msg []byte) error {
		parts = append(parts, part{compressed, string(msg)})
		return nil
	})
	return parts, err
}

func TestSplit(t *testing.T) {
	body := slices.Concat(prefixed(0, []byte("ab")), prefixed(1, nil), prefixed(0, []byte("c")))
	parts, err := split(body, 0)
	want := []part{{false, "ab"}, {true, ""}, {false, "c"}}
	if err != nil || fmt.Sprint(parts) != fmt.Sprint(want) {
		t.Errorf("Split: %v, %v; want %v", parts, err, want)
	}
	if parts, err := split(nil, 0); err != nil || len(parts) != 0 {
		t.Errorf("Split of an empty body: %v, %v", parts, err)
	}
	for _, c := range []struct {
		name string
		body []byte
		max  int
		want string
	}{
		{"a prefix cut", slices.Concat(body, []byte{0, 0, 0}), 0, "gRPC message framing: 3 bytes after the last message, want a 5-byte prefix"},
		{"only a prefix cut", []byte{0, 0}, 0, "gRPC message framing: a body of 2 bytes, want a 5-byte prefix"},
		{"a message cut", slices.Concat(body, prefixed(0, []byte("hello"))[:7]), 0, "gRPC message framing: message 4 says 5 bytes, 2 follow"},
		{"bad flag", slices.Concat(body, prefixed(2, []byte("x"))), 0, "gRPC message framing: message 4 has the flag 2, want 0 or 1"},
		{"over max", slices.Concat(body, prefixed(0, make([]byte, 11))), 10, "gRPC message framing: message 4 says 11 bytes, over the bound of 10"},
		{"over MaxMessage", []byte{0, 0xff, 0xff, 0xff, 0xff}, 0, "gRPC message framing: message 1 says 4294967295 bytes, over the bound of 4194304"},
	} {
		_, err := split(c.body, c.max)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: Split error %v, want %q", c.name, err, c.want)
		}
	}
	stop := errors.New("stop")
	calls := 0
	err = Split(body, 0, func(bool, []byte) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Errorf("Split with fn failing: %v after %d calls, want fn's error after 1", err, calls)
	}
	allocs := testing.AllocsPerRun(100, func() {
		Split(body, 0, func(bool, []byte) error { return nil })
	})
	if allocs != 0 {
		t.Errorf("Split allocates %v times, want 0", allocs)
	}
}

func FuzzSplit(f *testing.F) {
	fuzzcheck.Limit()
	good := slices.Concat(prefixed(0, []byte("ab")), prefixed(1, nil), prefixed(0, []byte("c")))
	f.Add(good, 0)
	f.Add(good, 1)
	f.Add(good[:len(good)-1], 0)
	f.Add(slices.Concat(good, []byte{0, 0}), 0)
	f.Add([]byte{2, 0, 0, 0, 0}, 0)
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff}, -1)
	f.Add([]byte{}, 5)
	f.Fuzz(func(t *testing.T, body []byte, max int) {
		fuzzcheck.Bound(t, len(body), func() {
			base := uintptr(unsafe.Pointer(unsafe.SliceData(body)))
			total := 0
			err := Split(body, max, func(compressed bool, msg []byte) error {
				// msg lies within body, just after its prefix.
				off := total + PrefixLen
				if off+len(msg) > len(body) {
					t.Fatalf("a message of %d bytes at %d in a body of %d", len(msg), off, len(body))
				}
				if len(msg) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(msg))) != base+uintptr(off) {
					t.Fatalf("a message at %d is not body[%d:]", off, off)
				}
				if compressed != (body[total] == 1) || int(binary.BigEndian.Uint32(body[total+1:])) != len(msg) {
					t.Fatalf("a message at %d: compressed %v, %d bytes; its prefix % x", off, compressed, len(msg), body[total:off])
				}
				if limit := max; limit > 0 && len(msg) > limit || limit <= 0 && len(msg) > MaxMessage {
					t.Fatalf("a message of %d bytes passed the bound %d", len(msg), max)
				}
				total = off + len(msg)
				return nil
			})
			if err == nil && total != len(body) {
				t.Fatalf("no error, but the messages cover %d bytes of %d", total, len(body))
			}
			if err != nil && !strings.HasPrefix(err.Error(), "gRPC message framing: ") {
				t.Fatalf("an error not about framing: %v", err)
			}
		})
	})
}

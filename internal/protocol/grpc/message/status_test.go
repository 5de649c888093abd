package message

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCodeName(t *testing.T) {
	want := []string{
		"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
		"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
		"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
		"UNAUTHENTICATED",
	}
	for code, name := range want {
		text := strconv.Itoa(code)
		got, ok := CodeName(text)
		if !ok || got != name {
			t.Errorf("CodeName(%q) = %q, %v; want %q", text, got, ok, name)
		}
		for _, s := range []string{name, strings.ToLower(name), text, " " + name + " "} {
			if c, err := ParseCode(s); err != nil || c != code {
				t.Errorf("ParseCode(%q) = %d, %v; want %d", s, c, err, code)
			}
		}
		if allocs := testing.AllocsPerRun(10, func() { CodeName(text) }); allocs != 0 {
			t.Errorf("CodeName(%q) allocates %v times", text, allocs)
		}
	}
	for _, c := range []struct {
		text, name string
		ok         bool
	}{
		{"17", "CODE(17)", true}, {"014", "UNAVAILABLE", true}, {"9999999999", "CODE(9999999999)", true},
		{"", "", false}, {"12345678901", "", false}, {"-1", "", false}, {"1x", "", false}, {" 1", "", false}, {"OK", "", false},
	} {
		if got, ok := CodeName(c.text); got != c.name || ok != c.ok {
			t.Errorf("CodeName(%q) = %q, %v; want %q, %v", c.text, got, ok, c.name, c.ok)
		}
	}
	for s, want := range map[string]int{"CODE(17)": 17, "code(99)": 99, "17": 17} {
		if c, err := ParseCode(s); err != nil || c != want {
			t.Errorf("ParseCode(%q) = %d, %v; want %d", s, c, err, want)
		}
	}
	wantErr := "; want a number or a name: " + strings.Join(want, ", ")
	for _, s := range []string{"", "NOPE", "-1", "CODE()", "CODE(1", "12345678901"} {
		if _, err := ParseCode(s); err == nil || err.Error() != "unknown gRPC status "+strconv.Quote(s)+wantErr {
			t.Errorf("ParseCode(%q): %v", s, err)
		}
	}
}

func TestDecodeMessage(t *testing.T) {
	for in, want := range map[string]string{
		"%E2%9C%93 ok%":                       "✓ ok%",
		"plain":                               "plain",
		"100%25 sure":                         "100% sure",
		"%zz%4":                               "%zz%4",
		"%4a%4A":                              "JJ",
		"bad %FF byte":                        "bad \uFFFD byte",
		"":                                    "",
		strings.Repeat("é", 150):              strings.Repeat("é", 100), // 300 bytes, clipped to 200
		strings.Repeat("%C3%A9", 150):         strings.Repeat("é", 100),
		"a" + strings.Repeat("%E2%9C%93", 80): "a" + strings.Repeat("✓", 66), // 1+198 bytes: the 67th would pass 200
	} {
		if got := DecodeMessage(in); got != want {
			t.Errorf("DecodeMessage(%.30q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("x", 1<<20)
	if got := DecodeMessage("%41" + long); got != "A"+long[:199] {
		t.Errorf("DecodeMessage of 1 MiB: %d bytes, want 200", len(got))
	}
}

func TestTimeout(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{1, "1n"},
		{time.Microsecond, "1000n"},
		{time.Millisecond, "1000000n"},
		{99999999, "99999999n"},
		{100000000, "100000u"},
		{100000001, "100001u"}, // rounded up
		{time.Second, "1000000u"},
		{99999999 * time.Microsecond, "99999999u"},
		{100 * time.Second, "100000m"},
		{time.Hour, "3600000m"},
		{10000 * time.Hour, "36000000S"},
		{10000*time.Hour + 1, "36000001S"},
		{100000 * time.Hour, "6000000M"},
		{1<<63 - 1, "2562048H"},
	} {
		if got, err := Timeout(c.d); err != nil || got != c.want {
			t.Errorf("Timeout(%v) = %q, %v; want %q", c.d, got, err, c.want)
		}
	}
	for _, d := range []time.Duration{0, -time.Second} {
		if _, err := Timeout(d); err == nil || err.Error() != "a gRPC timeout of "+d.String()+": want more than 0" {
			t.Errorf("Timeout(%v): %v", d, err)
		}
	}
}

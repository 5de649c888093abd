package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/grpcephemeral"
)

// benchrig grpc against a real grpc-go server, over h2c and TLS: the
// calls are recorded as a grpc sample, every one OK, the server's own
// count covers them, and a credential in the metadata is sent but never
// recorded or printed.
func TestGRPCQuick(t *testing.T) {
	t.Parallel()
	for _, tls := range []bool{false, true} {
		t.Run(map[bool]string{false: "h2c", true: "tls"}[tls], func(t *testing.T) {
			s := grpcephemeral.StartT(t, grpcephemeral.Options{TLS: tls})
			dir := t.TempDir()
			proto, err := grpcephemeral.WriteProto(dir)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"grpc", s.Addr(), "--proto", proto, "--call", "benchrig.test.v1.Greeter/SayHello",
				"--data", `{"name":"n{id}","id":{id}}`, "--expect-contains", `"message":"hello n`,
				"--metadata", "authorization: Bearer s3cret-token", "-c", "2", "--streams", "4", "-d", "500ms", "--no-calibrate"}
			if tls {
				ca, err := s.CACertFile(dir)
				if err != nil {
					t.Fatal(err)
				}
				args = append(args, "--cacert", ca)
			} else {
				args = append(args, "--insecure")
			}
			res := filepath.Join(dir, "r.json")
			out, stderr, code := invoke(t, append(args, "-o", res)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
			}
			doc := readResults(t, res)
			if len(doc.Samples) != 1 {
				t.Fatalf("%d samples, want 1", len(doc.Samples))
			}
			smp := doc.Samples[0]
			if smp.Protocol != "grpc" || smp.Load == nil || smp.Load.Requests == 0 || smp.Load.Errors != 0 || smp.Load.Unexpected != 0 {
				t.Fatalf("sample: protocol %q, load %+v", smp.Protocol, smp.Load)
			}
			// the server handled every recorded call, the pre-flight's and
			// those outstanding at the window's end besides
			if calls := s.Calls()["SayHello"]; calls < smp.Load.Requests+1 {
				t.Errorf("the server handled %d calls, benchrig recorded %d", calls, smp.Load.Requests)
			}
			raw, err := os.ReadFile(res)
			if err != nil {
				t.Fatal(err)
			}
			for what, text := range map[string]string{"results file": string(raw), "stdout": out, "stderr": stderr} {
				if strings.Contains(text, "s3cret-token") {
					t.Errorf("the metadata's credential reached the %s", what)
				}
			}
			if !strings.Contains(string(raw), `"authorization"`) {
				t.Errorf("the metadata's name is not recorded")
			}
			if o, e, code := invoke(t, "verify", res); code != 0 {
				t.Errorf("verify: exit %d\n%s%s", code, o, e)
			}
			// at a constant rate the streams carry several calls per
			// connection (ghz's --rps with --concurrency over one connection)
			before := s.Calls()["SayHello"]
			rres := filepath.Join(dir, "rate.json")
			out, stderr, code = invoke(t, append(args, "--rate", "400", "-o", rres)...)
			if code != 0 {
				t.Fatalf("--rate: exit %d\n%s\n%s", code, out, stderr)
			}
			rdoc := readResults(t, rres)
			if len(rdoc.Samples) != 1 || rdoc.Samples[0].Load == nil {
				t.Fatalf("--rate: %d samples", len(rdoc.Samples))
			}
			l := rdoc.Samples[0].Load
			if l.Rate == nil || l.Pipeline != 4 || l.Requests == 0 || l.Errors != 0 || l.Unexpected != 0 {
				t.Fatalf("--rate: load %+v, want calls at a rate over 4 streams per connection and no error", l)
			}
			if l.Rate.Scheduled < 100 || l.Rate.Scheduled > 300 {
				t.Errorf("--rate: %d calls scheduled in 500 ms at 400/s", l.Rate.Scheduled)
			}
			if calls := s.Calls()["SayHello"] - before; calls < l.Requests+1 {
				t.Errorf("--rate: the server handled %d calls, benchrig recorded %d", calls, l.Requests)
			}
		})
	}
}

// The pre-flight refuses a method the server does not serve, naming it;
// a broken .proto file is a usage error naming file:line:col; a method
// the file does not declare lists those it does.
func TestGRPCRefusals(t *testing.T) {
	t.Parallel()
	s := grpcephemeral.StartT(t, grpcephemeral.Options{})
	dir := t.TempDir()
	proto, err := grpcephemeral.WriteProto(dir)
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.proto")
	if err := os.WriteFile(broken, []byte("syntax = \"proto3\";\npackage x;\nmessage M {\n  string a = 1\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		proto string
		call  string
		want  []string
	}{
		{"unimplemented", proto, "benchrig.test.v1.Greeter/Missing", []string{"benchrig.test.v1.Greeter/Missing", "UNIMPLEMENTED"}},
		{"syntax", broken, "x.S/M", []string{"broken.proto:5:1: syntax error"}},
		{"undeclared", proto, "benchrig.test.v1.Greeter/Nope", []string{`no method "Nope"`, "SayHello"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, code := invoke(t, "grpc", s.Addr(), "--insecure", "--proto", c.proto, "--call", c.call,
				"--data", `{"name":"x"}`, "-c", "1", "-d", "300ms", "--no-calibrate")
			if code == 0 {
				t.Fatalf("exit 0, want a refusal\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
	if got := s.Calls()["SayHello"]; got != 0 {
		t.Errorf("the refused runs made %d SayHello calls", got)
	}
}

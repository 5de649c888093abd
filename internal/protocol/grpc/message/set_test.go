package message

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// typesProto is the test file of every field kind, named under the import
// path testdata/proto.
const (
	typesProto  = "testdata/proto/benchrig/types/v1/types.proto"
	importPath  = "testdata/proto"
	greeterPath = "../../../grpcephemeral/greeter.proto"
)

// loadTypes loads types.proto (with its local and well-known imports).
func loadTypes(t testing.TB) *Set {
	t.Helper()
	s, err := Load([]string{typesProto}, []string{importPath})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// scalars is the message type of types.proto with every field kind.
func scalars(t testing.TB) protoreflect.MessageDescriptor {
	t.Helper()
	md, err := loadTypes(t).Message("benchrig.types.v1.Scalars")
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// greeter loads the test service's .proto file of package grpcephemeral.
func greeter(t testing.TB) *Set {
	t.Helper()
	s, err := Load([]string{greeterPath}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoad(t *testing.T) {
	s := loadTypes(t)
	want := []string{"benchrig.types.v1.Types/Echo", "benchrig.types.v1.Types/Upload", "benchrig.types.v1.Types/Watch"}
	if got := s.Methods(); !slices.Equal(got, want) {
		t.Errorf("Methods() = %q, want %q", got, want)
	}
	if files := s.Files(); len(files) != 1 || files[0].Path() != "benchrig/types/v1/types.proto" {
		t.Errorf("Files() = %v, want the one file benchrig/types/v1/types.proto", files)
	}
	for _, name := range []string{"benchrig.types.v1.Scalars", "benchrig.types.v1.Scalars.Inner", "benchrig.common.v1.Ref", "google.protobuf.Timestamp"} {
		if md, err := s.Message(name); err != nil || string(md.FullName()) != name {
			t.Errorf("Message(%q) = %v, %v", name, md, err)
		}
	}
	if _, err := s.Message("benchrig.types.v1.Nope"); err == nil || !strings.Contains(err.Error(), `"benchrig.types.v1.Nope"`) {
		t.Errorf("Message of an unknown type: %v", err)
	}

	// The same file named relative to the import path.
	if _, err := Load([]string{"benchrig/types/v1/types.proto"}, []string{importPath}); err != nil {
		t.Errorf("a file named relative to its import path: %v", err)
	}

	g := greeter(t)
	want = []string{
		"benchrig.test.v1.Greeter/Chat", "benchrig.test.v1.Greeter/Collect", "benchrig.test.v1.Greeter/Fail",
		"benchrig.test.v1.Greeter/Lots", "benchrig.test.v1.Greeter/Missing", "benchrig.test.v1.Greeter/SayHello",
		"benchrig.test.v1.Greeter/Sleep",
	}
	if got := g.Methods(); !slices.Equal(got, want) {
		t.Errorf("greeter Methods() = %q, want %q", got, want)
	}
}

func TestLoadErrors(t *testing.T) {
	many := make([]string, MaxFiles+1)
	for i := range many {
		many[i] = typesProto
	}
	for _, c := range []struct {
		name        string
		files, path []string
		want        string
	}{
		{"syntax", []string{"testdata/bad/syntax.proto"}, nil, "testdata/bad/syntax.proto:7:3: syntax error: expecting ';'"},
		{"missing import", []string{"testdata/bad/missing_import.proto"}, nil,
			`testdata/bad/missing_import.proto:5:8: import "benchrig/nowhere/v1/missing.proto": no such file in testdata/bad`},
		{"unknown type", []string{"testdata/bad/unknown_type.proto"}, nil,
			"testdata/bad/unknown_type.proto:6:3: field benchrig.bad.v1.UsesUnknown.thing: unknown type NoSuchType"},
		{"no import path", []string{typesProto}, nil,
			`types.proto:8:8: import "benchrig/common/v1/common.proto": no such file in testdata/proto/benchrig/types/v1`},
		{"not under the import path", []string{"testdata/bad/syntax.proto"}, []string{importPath},
			"testdata/bad/syntax.proto is not under any import path (testdata/proto)"},
		{"no file", []string{"testdata/bad/nofile.proto"}, nil, "stat testdata/bad/nofile.proto: no such file or directory"},
		{"directory", []string{"testdata/bad"}, nil, "testdata/bad is a directory, not a .proto file"},
		{"none", nil, nil, "no .proto file given"},
		{"too many", many, []string{importPath}, "257 .proto files given, over the bound of 256"},
	} {
		_, err := Load(c.files, c.path)
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%s: Load error %v, want one ending %q", c.name, err, c.want)
		}
	}
}

// TestLoadBounds reads more imports than MaxFiles, and a file over
// MaxFileSize.
func TestLoadBounds(t *testing.T) {
	dir := t.TempDir()
	var main strings.Builder
	main.WriteString("syntax = \"proto3\";\npackage many;\n")
	for i := range MaxFiles {
		fmt.Fprintf(&main, "import \"f%d.proto\";\n", i)
		src := fmt.Sprintf("syntax = \"proto3\";\npackage many;\nmessage M%d {}\n", i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.proto", i)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	top := filepath.Join(dir, "main.proto")
	if err := os.WriteFile(top, []byte(main.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load([]string{top}, nil)
	if want := "more than 256 .proto files to read (imports included), the bound"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Load of a file with %d imports: %v, want %q", MaxFiles, err, want)
	}

	big := filepath.Join(dir, "big.proto")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = Load([]string{big}, nil)
	if want := "big.proto is over the bound of 16777216 bytes"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Load of a file of %d bytes: %v, want %q", MaxFileSize+1, err, want)
	}
}

func TestMethod(t *testing.T) {
	g := greeter(t)
	for _, name := range []string{"benchrig.test.v1.Greeter/SayHello", "benchrig.test.v1.Greeter.SayHello", "/benchrig.test.v1.Greeter/SayHello"} {
		m, err := g.Method(name)
		if err != nil {
			t.Fatalf("Method(%q): %v", name, err)
		}
		if m.Path != "/benchrig.test.v1.Greeter/SayHello" || m.Name != "benchrig.test.v1.Greeter/SayHello" {
			t.Errorf("Method(%q): Path %q Name %q", name, m.Path, m.Name)
		}
		if m.Desc.Input().FullName() != "benchrig.test.v1.HelloRequest" || m.Desc.Output().FullName() != "benchrig.test.v1.HelloReply" {
			t.Errorf("Method(%q): %s → %s", name, m.Desc.Input().FullName(), m.Desc.Output().FullName())
		}
		if m.ClientStreaming() || m.ServerStreaming() {
			t.Errorf("SayHello is unary; streaming %v %v", m.ClientStreaming(), m.ServerStreaming())
		}
	}
	for name, want := range map[string][2]bool{"Lots": {false, true}, "Collect": {true, false}, "Chat": {true, true}} {
		m, err := g.Method("benchrig.test.v1.Greeter/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]bool{m.ClientStreaming(), m.ServerStreaming()}; got != want {
			t.Errorf("%s: client, server streaming %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]string{
		"benchrig.test.v1.Greeter/Nope": `service benchrig.test.v1.Greeter has no method "Nope"; its methods: Chat, Collect, Fail, Lots, Missing, SayHello, Sleep`,
		"benchrig.test.v1.Greeter.Nope": `service benchrig.test.v1.Greeter has no method "Nope"; its methods: Chat, Collect, Fail, Lots, Missing, SayHello, Sleep`,
		"Greeter/SayHello":              `unknown service "Greeter"; known services: benchrig.test.v1.Greeter`,
		"SayHello":                      `method "SayHello": want pkg.Service/Method or pkg.Service.Method`,
		"a/b/c":                         `method "a/b/c": want pkg.Service/Method or pkg.Service.Method`,
		"benchrig.test.v1.Greeter/":     `method "benchrig.test.v1.Greeter/": want pkg.Service/Method or pkg.Service.Method`,
	} {
		if _, err := g.Method(name); err == nil || err.Error() != want {
			t.Errorf("Method(%q): %v, want %q", name, err, want)
		}
	}
}

// TestMethodListClipped: an unknown service's error lists 20 known ones,
// then how many more.
func TestMethodListClipped(t *testing.T) {
	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("syntax = \"proto3\";\npackage lots;\nmessage M {}\n")
	for i := range 25 {
		fmt.Fprintf(&src, "service S%02d { rpc Do(M) returns (M); }\n", i)
	}
	p := filepath.Join(dir, "lots.proto")
	if err := os.WriteFile(p, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load([]string{p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Method("lots.Nope/Do")
	var names []string
	for i := range 20 {
		names = append(names, fmt.Sprintf("lots.S%02d", i))
	}
	want := `unknown service "lots.Nope"; known services: ` + strings.Join(names, ", ") + " and 5 more"
	if err == nil || err.Error() != want {
		t.Errorf("Method of an unknown service: %v\nwant %s", err, want)
	}
}

func TestFromDescriptors(t *testing.T) {
	s := loadTypes(t)
	again, err := FromDescriptors(s.Files())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Methods(), s.Methods()) {
		t.Errorf("FromDescriptors: methods %q, want %q", again.Methods(), s.Methods())
	}
	// The imports come along: the other local file's type and the
	// well-known one.
	for _, name := range []string{"benchrig.common.v1.Ref", "google.protobuf.Timestamp"} {
		if _, err := again.Message(name); err != nil {
			t.Errorf("FromDescriptors: %v", err)
		}
	}
	if _, err := FromDescriptors(nil); err == nil {
		t.Error("FromDescriptors(nil): no error")
	}
	if _, err := FromDescriptors([]protoreflect.FileDescriptor{nil}); err == nil || err.Error() != "file descriptor 1 is nil" {
		t.Errorf("FromDescriptors of a nil file: %v", err)
	}
}

// Command footprint lists every file outside a protocol's own directory
// that must change with the protocol: scripts/protocol-footprint.sh runs
// it. A protocol's own directory is internal/protocol/KEY when it exists,
// else its driver's, internal/driver/KEY. Listed, one path a line:
//
//   - non-test Go files outside it that import one of its packages;
//   - non-test Go files outside it that use, as the type checker resolves
//     them, the suite's protocol constant whose value is KEY (suite.RESP),
//     the suite Path's section for KEY (the field tagged json:"KEY") or
//     that section's type (suite.RESPPath);
//   - README.md and docs/*.md when they name the directory.
//
// A file that merely says "http" in a string, a comment or a readiness
// probe's field does not count: only the identifiers above do.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

type pkg struct {
	Dir, ImportPath, Export, Name string
	GoFiles                       []string
	Module                        *struct{ Main bool }
}

func main() {
	flag.Usage = func() { fmt.Fprintln(os.Stderr, "usage: footprint KEY (a protocol key: http, pg, resp)") }
	flag.Parse()
	if flag.NArg() != 1 || !regexp.MustCompile(`^[a-z][a-z0-9]{0,31}$`).MatchString(flag.Arg(0)) {
		flag.Usage()
		os.Exit(2)
	}
	files, home, err := footprint(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "footprint:", err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Println(f)
	}
	fmt.Fprintf(os.Stderr, "protocol %s (home %s): %d files outside it\n", flag.Arg(0), home, len(files))
}

func footprint(key string) ([]string, string, error) {
	home := filepath.Join("internal", "protocol", key)
	if _, err := os.Stat(home); err != nil {
		home = filepath.Join("internal", "driver", key)
		if _, err := os.Stat(home); err != nil {
			return nil, "", fmt.Errorf("no directory for protocol %s (internal/protocol/%s or internal/driver/%s)", key, key, key)
		}
	}
	m, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		return nil, "", fmt.Errorf("go list -m: %w", err)
	}
	module = strings.TrimSpace(string(m))
	out, err := exec.Command("go", "list", "-e", "-export", "-deps", "-json", "./...").Output()
	if err != nil {
		return nil, "", fmt.Errorf("go list: %w", err)
	}
	exports := map[string]string{}
	var mine []pkg
	cwd, _ := os.Getwd()
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, "", err
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Main {
			mine = append(mine, p)
		}
	}
	rel := func(dir string) string { r, _ := filepath.Rel(cwd, dir); return r }
	inHome := func(dir string) bool {
		r := rel(dir)
		return r == home || strings.HasPrefix(r, home+string(filepath.Separator))
	}
	homePkgs := map[string]bool{}
	for _, p := range mine {
		if inHome(p.Dir) {
			homePkgs[p.ImportPath] = true
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	var suiteObjs map[types.Object]bool
	found := map[string]bool{}
	for _, p := range mine {
		if inHome(p.Dir) || len(p.GoFiles) == 0 {
			continue
		}
		var asts []*ast.File
		for _, f := range p.GoFiles {
			af, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, "", err
			}
			asts = append(asts, af)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: imp, Error: func(error) {}}
		tp, _ := conf.Check(p.ImportPath, fset, asts, info)
		for _, af := range asts {
			name := rel(fset.File(af.Pos()).Name())
			for _, is := range af.Imports {
				if homePkgs[strings.Trim(is.Path.Value, `"`)] {
					found[name] = true
				}
			}
		}
		if suiteObjs == nil && tp != nil && tp.Path() != suitePath(tp) {
			suiteObjs = protocolObjects(key, suitePackage(tp))
		}
		objs := suiteObjs
		if tp != nil && tp.Path() == suitePath(tp) { // suite itself, from source
			objs = protocolObjects(key, tp)
		}
		for id, obj := range info.Uses {
			if obj != nil && objs[origin(obj)] {
				found[rel(fset.Position(id.Pos()).Filename)] = true
			}
		}
	}
	for _, md := range append([]string{"README.md"}, glob("docs/*.md")...) {
		if b, err := os.ReadFile(md); err == nil && bytes.Contains(b, []byte(filepath.ToSlash(home))) {
			found[md] = true
		}
	}
	var list []string
	for f := range found {
		list = append(list, filepath.ToSlash(f))
	}
	sort.Strings(list)
	return list, home, nil
}

func glob(p string) []string { m, _ := filepath.Glob(p); return m }

// origin is the declared object of a field or method reached through an
// instantiated type (itself otherwise).
func origin(obj types.Object) types.Object {
	if v, ok := obj.(*types.Var); ok {
		return v.Origin()
	}
	return obj
}

// suitePackage finds internal/suite among tp and its imports.
func suitePackage(tp *types.Package) *types.Package {
	for _, ip := range tp.Imports() {
		if ip.Path() == suitePath(tp) {
			return ip
		}
	}
	return nil
}

// module is the main module's path (set by footprint).
var module string

// suitePath is internal/suite's import path.
func suitePath(*types.Package) string { return module + "/internal/suite" }

// protocolObjects are suite's identifiers for key: the Protocol constant
// whose value is key, the Path field tagged json:"key" and its type.
func protocolObjects(key string, sp *types.Package) map[types.Object]bool {
	if sp == nil {
		return nil
	}
	objs := map[types.Object]bool{}
	scope := sp.Scope()
	for _, n := range scope.Names() {
		if c, ok := scope.Lookup(n).(*types.Const); ok && c.Type().String() == sp.Path()+".Protocol" &&
			c.Val().Kind() == constant.String && constant.StringVal(c.Val()) == key {
			objs[c] = true
		}
	}
	if tn, ok := scope.Lookup("Path").(*types.TypeName); ok {
		if st, ok := tn.Type().Underlying().(*types.Struct); ok {
			for i := 0; i < st.NumFields(); i++ {
				tag := reflect.StructTag(st.Tag(i)).Get("json")
				if strings.Split(tag, ",")[0] != key {
					continue
				}
				objs[st.Field(i)] = true
				t := st.Field(i).Type()
				if ptr, ok := t.(*types.Pointer); ok {
					t = ptr.Elem()
				}
				if named, ok := t.(*types.Named); ok {
					objs[named.Obj()] = true
				}
			}
		}
	}
	return objs
}

package message

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/reflect/protoreflect"
)

const (
	// MaxFiles bounds the .proto files Load reads, imports included (the
	// standard google/protobuf ones are not read, so not counted).
	MaxFiles = 256
	// MaxFileSize bounds one .proto file, in bytes.
	MaxFileSize = 16 << 20
	// maxErrors is how many errors of the .proto files Load reports.
	maxErrors = 10
)

// Load parses the .proto files with protocompile. Imports are resolved from
// importPaths, like protoc's -I (each file must then lie under one of them,
// or be named relative to one); when importPaths is empty, from the
// directory of each file. The standard imports (google/protobuf/*.proto,
// the well-known types) are always available. Errors name file:line:col and
// what is wrong. At most MaxFiles files are read, each at most MaxFileSize
// bytes.
func Load(files []string, importPaths []string) (*Set, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("no .proto file given")
	}
	if len(files) > MaxFiles {
		return nil, fmt.Errorf("%d .proto files given, over the bound of %d", len(files), MaxFiles)
	}
	l := &loader{disk: map[string]string{}}
	names := make([]string, len(files))
	if len(importPaths) == 0 {
		byName := map[string]string{}
		for i, f := range files {
			if err := isFile(f); err != nil {
				return nil, err
			}
			dir, name := filepath.Dir(f), filepath.Base(f)
			if other, ok := byName[name]; ok && other != f {
				return nil, fmt.Errorf("%s and %s have the same name %s (no import path given: each file's directory is one); give import paths", other, f, name)
			}
			byName[name] = f
			names[i] = name
			if !slices.Contains(l.dirs, dir) {
				l.dirs = append(l.dirs, dir)
			}
		}
	} else {
		l.dirs = importPaths
		for i, f := range files {
			name, err := nameUnder(f, importPaths)
			if err != nil {
				return nil, err
			}
			names[i] = name
		}
	}
	var mu sync.Mutex
	var reported []reporter.ErrorWithPos
	rep := reporter.NewReporter(func(err reporter.ErrorWithPos) error {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err)
		if len(reported) >= maxErrors {
			return err
		}
		return nil
	}, nil)
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(l),
		Reporter: rep,
	}
	compiled, err := c.Compile(context.Background(), names...)
	if err != nil {
		mu.Lock()
		defer mu.Unlock()
		if len(reported) == 0 {
			var ewp reporter.ErrorWithPos
			if errors.As(err, &ewp) {
				return nil, errors.New(l.positioned(ewp))
			}
			return nil, err
		}
		msgs := make([]string, 0, len(reported))
		for _, e := range reported {
			msgs = append(msgs, l.positioned(e))
		}
		if len(reported) >= maxErrors {
			msgs = append(msgs, fmt.Sprintf("(stopped after %d errors)", maxErrors))
		}
		return nil, errors.New(strings.Join(msgs, "\n"))
	}
	fds := make([]protoreflect.FileDescriptor, len(compiled))
	for i, f := range compiled {
		fds[i] = f
	}
	return FromDescriptors(fds)
}

// nameUnder returns the name of file f for the compiler: its path relative
// to the import path it lies under, or f itself when it is a relative name
// found in one of them.
func nameUnder(f string, importPaths []string) (string, error) {
	abs, err := filepath.Abs(f)
	if err != nil {
		return "", err
	}
	for _, ip := range importPaths {
		absIP, err := filepath.Abs(ip)
		if err != nil {
			return "", err
		}
		rel, err := filepath.Rel(absIP, abs)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			if err := isFile(f); err != nil {
				return "", err
			}
			return filepath.ToSlash(rel), nil
		}
	}
	if !filepath.IsAbs(f) {
		for _, ip := range importPaths {
			if isFile(filepath.Join(ip, f)) == nil {
				return filepath.ToSlash(filepath.Clean(f)), nil
			}
		}
	}
	return "", fmt.Errorf("%s is not under any import path (%s)", f, strings.Join(importPaths, ", "))
}

// isFile says why f is not a file that can be read, or nil.
func isFile(f string) error {
	st, err := os.Stat(f)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a directory, not a .proto file", f)
	}
	return nil
}

// loader is Load's resolver: it reads files from its directories, counts
// and bounds them, and remembers where on disk each name was found.
type loader struct {
	dirs []string

	mu   sync.Mutex
	read int               // files read
	disk map[string]string // a file's name → its path on disk
}

// FindFileByPath reads the file called name from the first directory that
// has it.
func (l *loader) FindFileByPath(name string) (protocompile.SearchResult, error) {
	var notFound error
	for _, dir := range l.dirs {
		p := filepath.Join(dir, filepath.FromSlash(name))
		data, err := l.readFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			notFound = err
			continue
		}
		if err != nil {
			return protocompile.SearchResult{}, err
		}
		l.mu.Lock()
		l.disk[name] = p
		l.mu.Unlock()
		return protocompile.SearchResult{Source: bytes.NewReader(data)}, nil
	}
	if notFound == nil {
		notFound = fs.ErrNotExist
	}
	return protocompile.SearchResult{}, &notFoundError{name: name, dirs: l.dirs, err: notFound}
}

// notFoundError is a file that none of the import paths has.
type notFoundError struct {
	name string
	dirs []string
	err  error
}

func (e *notFoundError) Error() string {
	return fmt.Sprintf("import %q: no such file in %s", e.name, strings.Join(e.dirs, ", "))
}

func (e *notFoundError) Unwrap() error { return e.err }

// readFile reads the file at p, within the bounds of Load.
func (l *loader) readFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a directory", p)
	}
	l.mu.Lock()
	l.read++
	n := l.read
	l.mu.Unlock()
	if n > MaxFiles {
		return nil, fmt.Errorf("more than %d .proto files to read (imports included), the bound", MaxFiles)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s is over the bound of %d bytes", p, MaxFileSize)
	}
	return data, nil
}

// positioned renders an error of a .proto file as file:line:col: what,
// the file named by its path on disk.
func (l *loader) positioned(e reporter.ErrorWithPos) string {
	pos := e.GetPosition()
	return fmt.Sprintf("%s:%d:%d: %v", l.diskName(pos.Filename), pos.Line, pos.Col, e.Unwrap())
}

// diskName returns where the file called name was read from (name itself
// when it was not read from disk).
func (l *loader) diskName(name string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.disk[name]; ok {
		return p
	}
	return name
}

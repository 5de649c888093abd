package target

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/benchrig/benchrig/internal/proc"
)

// What a target actually ran. The binary its command names says little
// when the command is a wrapper (a script that execs the server, npm
// start): Ran reads, once the target is ready, what every process of its
// tree runs: the SHA-256 of /proc/PID/exe (the bytes running, even if the
// file on disk has been replaced since) and, for an interpreter (sh, node,
// python, java…), of the script files it was given. A resumed run compares
// them with the recorded ones.

// File is one file a target's process tree runs.
type File struct {
	// Path is the executable's path as the kernel reports it (with
	// " (deleted)" when it was removed or replaced since it started), or
	// the script's absolute path.
	Path string
	// SHA256 is the hex SHA-256 of its bytes.
	SHA256 string
	// Kind is FileExe or FileScript.
	Kind string
}

// Kinds of File.
const (
	FileExe    = "exe"
	FileScript = "script"
)

// maxScriptBytes bounds the script file hashed: a larger "script" is
// not hashed.
const maxScriptBytes = 64 << 20

// interpreterName matches the base names of the programs whose file
// arguments are scripts (what they run): shells, and the runtimes of
// interpreted and bytecode languages, versioned or not (python3.11).
var interpreterName = regexp.MustCompile(`^(sh|bash|dash|zsh|ksh|mksh|ash|busybox|node|nodejs|deno|bun|python[0-9.]*|pypy[0-9.]*|ruby[0-9.]*|perl[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|java|Rscript|tclsh[0-9.]*|dotnet)$`)

// inlineFlags give an interpreter its program inline or by module name,
// not in a file: the arguments after them are not scripts.
var inlineFlags = map[string]bool{"-c": true, "-e": true, "-m": true, "-p": true, "--eval": true, "--print": true}

// Ran returns what the target's process tree runs now: every process
// under its watchdog (the target, its children, and the daemons it
// orphaned, which the watchdog adopted), each executable and the script
// each interpreter of it runs (see scriptOf), sorted by kind and path,
// without repeats. Processes that end while it reads are skipped; it
// fails only when no process could be read at all.
func (p *Process) Ran() ([]File, error) {
	fs := proc.Default()
	tab, err := fs.Table()
	if err != nil {
		return nil, err
	}
	pids := tab.Descendants(p.w.wd.Process.Pid)
	if len(pids) == 0 {
		pids = append([]int{p.pid}, tab.Descendants(p.pid)...)
	}
	return treeFiles(fs, pids)
}

// treeFiles hashes what the processes pids run (see Ran).
func treeFiles(fs proc.FS, pids []int) ([]File, error) {
	seen := map[File]bool{}
	var out []File
	add := func(f File) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	var firstErr error
	read := 0
	for _, pid := range pids {
		dir := fs.Path(strconv.Itoa(pid))
		exe, err := os.Readlink(filepath.Join(dir, "exe"))
		if err != nil {
			firstErr = firstOf(firstErr, err)
			continue
		}
		sum, err := hashFile(filepath.Join(dir, "exe"), 0)
		if err != nil {
			firstErr = firstOf(firstErr, err)
			continue
		}
		read++
		add(File{Path: exe, SHA256: sum, Kind: FileExe})
		if !interpreterName.MatchString(filepath.Base(strings.TrimSuffix(exe, " (deleted)"))) {
			continue
		}
		args, err := fs.Cmdline(pid)
		if err != nil || len(args) < 2 {
			continue
		}
		if f, ok := scriptOf(dir, args); ok {
			add(f)
		}
	}
	if read == 0 && len(pids) > 0 {
		if firstErr == nil {
			firstErr = errors.New("no process left")
		}
		return nil, fmt.Errorf("read what the target runs: %w", firstErr)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].SHA256 < out[j].SHA256
	})
	return out, nil
}

// scriptOf finds the script an interpreter process runs: its first
// argument that is not a flag, when that names a regular file (resolved
// from the process's working directory), hashed. The arguments after it
// are the script's own (data, not code), and a flag giving the program
// inline (-c, -e, -m) means there is no script file.
func scriptOf(dir string, args []string) (File, bool) {
	for _, a := range args[1:] {
		if inlineFlags[a] {
			return File{}, false
		}
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		open, shown := a, a
		if !filepath.IsAbs(a) {
			// Through the process's own cwd link: the file it resolves.
			cwd, _ := os.Readlink(filepath.Join(dir, "cwd"))
			open, shown = filepath.Join(dir, "cwd", a), filepath.Join(cwd, a)
		}
		if fi, err := os.Stat(open); err != nil || !fi.Mode().IsRegular() {
			return File{}, false
		}
		sum, err := hashFile(open, maxScriptBytes)
		if err != nil {
			return File{}, false
		}
		return File{Path: shown, SHA256: sum, Kind: FileScript}, true
	}
	return File{}, false
}

// firstOf keeps the first error.
func firstOf(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// fileKey identifies a file's contents as far as its metadata can: the
// same device, inode, size and modification time are taken for the same
// bytes.
type fileKey struct {
	dev, ino uint64
	size     int64
	mtime    int64 // ns
}

// hashes caches the SHA-256 of every file hashed by this process, by
// fileKey: a 100 MB runtime is hashed once per run, not once per sample.
var hashes struct {
	sync.Mutex
	m map[fileKey]string
}

// hashFile returns the hex SHA-256 of the file at path (a /proc/PID/exe
// link opens the running executable), from the cache when its device,
// inode, size and mtime are known. A file larger than max (when max > 0)
// is an error.
func hashFile(path string, max int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file", path)
	}
	if max > 0 && fi.Size() > max {
		return "", fmt.Errorf("%s: %d bytes, more than the %d hashed", path, fi.Size(), max)
	}
	var key fileKey
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok {
		key = fileKey{dev: uint64(st.Dev), ino: st.Ino, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
		hashes.Lock()
		sum, hit := hashes.m[key]
		hashes.Unlock()
		if hit {
			return sum, nil
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if ok {
		hashes.Lock()
		if hashes.m == nil {
			hashes.m = map[fileKey]string{}
		}
		hashes.m[key] = sum
		hashes.Unlock()
	}
	return sum, nil
}

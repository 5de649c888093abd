package http

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Bounds of request files and bodies.
const (
	// MaxBody bounds a request body read from a file.
	MaxBody = 64 << 20
	// maxTargetLine bounds one line of a request file.
	maxTargetLine = 1 << 20
)

// LoadTargets reads a request file in vegeta's targets format: each
// request is a line `METHOD URL`, then optional `Name: value` header lines,
// then optionally its body, as `@path/to/body` (a path relative to the
// request file's directory) or as `@<<TAG` followed by lines up to a line
// `TAG`; blank lines separate requests, and a new `METHOD URL` line also
// starts the next one. URLs without a scheme mean http://
// (NormalizeURL). Two extensions: lines starting with `#` are comments, and
// `METHOD URL weight=N` gives the request's weight (Config.Order; 1 by
// default). Every error names path:line.
func LoadTargets(path string) ([]RequestSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("request file: %w", err)
	}
	defer f.Close()
	return parseTargets(f, path, filepath.Dir(path))
}

// parseTargets reads the targets format from r; name labels errors and
// body paths are relative to dir.
func parseTargets(r io.Reader, name, dir string) ([]RequestSpec, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxTargetLine)
	var reqs []RequestSpec
	var cur *RequestSpec // the request whose headers are being read
	hasBody := false
	ln := 0
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s:%d: %s", name, ln, fmt.Sprintf(format, a...))
	}
	for sc.Scan() {
		ln++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			cur = nil
			continue
		case strings.HasPrefix(line, "#"):
			continue
		case isRequestLine(line):
			spec, err := parseRequestLine(line)
			if err != nil {
				return nil, bad("%v", err)
			}
			if len(reqs) == MaxRequests {
				return nil, bad("more than %d requests", MaxRequests)
			}
			reqs = append(reqs, spec)
			cur, hasBody = &reqs[len(reqs)-1], false
			continue
		case cur == nil:
			return nil, bad("%q: want a request line `METHOD URL` (such as `GET http://127.0.0.1:8080/`)", clipString(line))
		case hasBody:
			return nil, bad("%q after the body: a body ends its request; leave a blank line before the next `METHOD URL`", clipString(line))
		case strings.HasPrefix(line, "@<<"):
			tag := strings.TrimSpace(line[3:])
			if tag == "" {
				return nil, bad("`@<<` needs a tag ending the body, such as `@<<EOF`")
			}
			start := ln
			var b strings.Builder
			closed := false
			for sc.Scan() {
				ln++
				if sc.Text() == tag {
					closed = true
					break
				}
				if b.Len()+len(sc.Text())+1 > MaxBody {
					return nil, bad("inline body over %d MiB", MaxBody>>20)
				}
				b.WriteString(sc.Text() + "\n")
			}
			if !closed && sc.Err() == nil {
				ln = start
				return nil, bad("inline body `@<<%s` never ends: want a line %q", tag, tag)
			}
			cur.Body, hasBody = b.String(), true
		case strings.HasPrefix(line, "@"):
			p := strings.TrimSpace(line[1:])
			if p == "" {
				return nil, bad("`@` needs a file name: `@path/to/body`")
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			body, err := ReadBodyFile(p)
			if err != nil {
				return nil, bad("%v", err)
			}
			cur.Body, cur.BodyFile, hasBody = body, p, true
		default:
			k, v, ok := strings.Cut(line, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || v == "" || strings.ContainsAny(k, " \t") {
				return nil, bad("%q: want a header `Name: value`, a body `@file`, or a blank line", clipString(line))
			}
			if !httpguts.ValidHeaderFieldName(k) {
				return nil, bad("header name %q: want a token (letters, digits and !#$%%&'*+-.^_`|~, RFC 9110 §5.1)", clipString(k))
			}
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, bad("header %s: the value holds a control character (CR, LF or NUL are refused)", k)
			}
			if cur.Headers == nil {
				cur.Headers = map[string]string{}
			}
			if old, dup := cur.Headers[k]; dup {
				v = old + ", " + v // repeated: one field, as RFC 9110 §5.3 allows
			}
			cur.Headers[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		ln++
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, bad("line longer than %d KiB", maxTargetLine>>10)
		}
		return nil, bad("%v", err)
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("%s: no requests: want lines `METHOD URL` (vegeta's targets format)", name)
	}
	return reqs, nil
}

// isRequestLine reports whether a line starts a request: an upper-case
// token, a space, then something (a header's name ends with ':').
func isRequestLine(line string) bool {
	tok, _, ok := strings.Cut(line, " ")
	if !ok || tok == "" {
		return false
	}
	for _, r := range tok {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

// parseRequestLine reads `METHOD URL [weight=N]`.
func parseRequestLine(line string) (RequestSpec, error) {
	f := strings.Fields(line)
	if len(f) < 2 || len(f) > 3 {
		return RequestSpec{}, fmt.Errorf("%q: want `METHOD URL` or `METHOD URL weight=N`", clipString(line))
	}
	u, err := NormalizeURL(f[1])
	if err != nil {
		return RequestSpec{}, err
	}
	s := RequestSpec{Method: f[0], URL: u}
	if len(f) == 3 {
		v, ok := strings.CutPrefix(f[2], "weight=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 1 || n > MaxWeight {
			return RequestSpec{}, fmt.Errorf("%q: want weight=N with N 1–%d", f[2], MaxWeight)
		}
		s.Weight = n
	}
	return s, nil
}

// ReadBodyFile reads a request body from a file (--body-file), at most
// MaxBody bytes.
func ReadBodyFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("body file: %w", err)
	}
	defer f.Close()
	var b bytes.Buffer
	n, err := io.Copy(&b, io.LimitReader(f, MaxBody+1))
	if err != nil {
		return "", fmt.Errorf("body file %s: %w", path, err)
	}
	if n > MaxBody {
		return "", fmt.Errorf("body file %s: over %d MiB", path, MaxBody>>20)
	}
	return b.String(), nil
}

// ReadBodyArg reads a body argument as curl, autocannon and hey users
// write it (-b/--body): `@path` is the contents of the file at path
// (returned as file too, for the record), anything else the body itself.
// A body that must start with '@' is written `@@…` (the first '@' dropped).
func ReadBodyArg(arg string) (body, file string, err error) {
	switch {
	case strings.HasPrefix(arg, "@@"):
		return arg[1:], "", nil
	case arg == "@":
		return "", "", fmt.Errorf("body %q: `@` needs a file name (`-b @path/to/body`)", arg)
	case strings.HasPrefix(arg, "@"):
		body, err := ReadBodyFile(arg[1:])
		if err != nil {
			return "", "", err
		}
		return body, arg[1:], nil
	}
	return arg, "", nil
}

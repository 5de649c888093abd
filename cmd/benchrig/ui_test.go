package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestUIServesTheRun: --ui prints the page's URL first and serves the page
// and its event stream while the run goes on; the run ends on its own
// (--ui-linger bounds the page after it) with its ordinary output.
func TestUIServesTheRun(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	srv := helloServer(t)
	pr, pw := io.Pipe()
	var stdout bytes.Buffer
	done := make(chan error, 1)
	go func() {
		err := run(context.Background(), []string{"http", srv, "-c", "2", "-d", "3s", "--no-calibrate", "--ui", "--ui-linger", "1s"}, &stdout, pw)
		pw.Close()
		done <- err
	}()
	sc := bufio.NewScanner(pr)
	url := ""
	for sc.Scan() {
		if m := regexp.MustCompile(`live page at (http://127\.0\.0\.1:\d+/)`).FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	go io.Copy(io.Discard, pr) // the rest of stderr
	if url == "" {
		t.Fatalf("no live page URL on stderr")
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "benchrig live") {
		t.Errorf("page: %d %.200q", resp.StatusCode, page)
	}
	resp, err = c.Get(url + "events")
	if err != nil {
		t.Fatal(err)
	}
	ev := bufio.NewScanner(resp.Body)
	gotID := false
	for ev.Scan() && !gotID {
		gotID = strings.HasPrefix(ev.Text(), "id:")
	}
	resp.Body.Close()
	if !gotID {
		t.Errorf("the event stream sent no event")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end")
	}
	if !strings.Contains(stdout.String(), "requests") {
		t.Errorf("stdout: %q", stdout.String())
	}
}

// watchUI runs cmd (a benchrig run with --ui and --ui-linger) with TMPDIR
// dir, reads the page's event stream until the page closes, and returns
// every event's data; the run must succeed.
func watchUI(t *testing.T, cmd *exec.Cmd, dir string) string {
	t.Helper()
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	url := ""
	for url == "" && sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if m := regexp.MustCompile(`live page at (http://127\.0\.0\.1:\d+/)`).FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
	}
	rest := make(chan struct{})
	go func() {
		defer close(rest)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
		}
	}()
	var data strings.Builder
	if url != "" {
		c := &http.Client{Timeout: 2 * time.Minute}
		if resp, err := c.Get(url + "events"); err != nil {
			t.Errorf("events: %v", err)
		} else {
			ev := bufio.NewScanner(resp.Body)
			ev.Buffer(make([]byte, 1<<20), 16<<20)
			for ev.Scan() {
				if d, ok := strings.CutPrefix(ev.Text(), "data:"); ok {
					data.WriteString(d + "\n")
				}
			}
			resp.Body.Close()
		}
	}
	<-rest
	if err := cmd.Wait(); err != nil || url == "" {
		t.Fatalf("benchrig %s: %v (page %q)\n%s%s", strings.Join(cmd.Args[1:], " "), err, url, stdout.String(), log.String())
	}
	return data.String()
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestUIServesTheRun: --ui prints the page's URL first and serves the page
// and its event stream while the run goes on; the run ends on its own
// (--ui-linger bounds the page after it) with its ordinary output.
func TestUIServesTheRun(t *testing.T) {
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

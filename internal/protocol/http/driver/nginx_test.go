package http

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
)

// nginxConf is a minimal nginx configuration: one worker, the log, pid
// and temp files in the prefix directory, one TLS server with HTTP/2 on
// 127.0.0.1 answering "hello" (access log: the protocol of each request).
const nginxConf = `daemon off;
worker_processes 1;
error_log %[1]s/error.log warn;
pid %[1]s/nginx.pid;
events { worker_connections 1024; }
http {
	log_format proto '$server_protocol';
	access_log %[1]s/access.log proto;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	server {
		listen 127.0.0.1:%[2]d ssl http2;
		ssl_certificate %[3]s;
		ssl_certificate_key %[4]s;
		ssl_protocols TLSv1.2 TLSv1.3;
		keepalive_requests 1000000;
		location / { return 200 "hello\n"; }
	}
}
`

// startNginx starts Debian's nginx (nginx-light has the http2 module) with
// the certificate on a free port of 127.0.0.1, in a temporary prefix, and
// stops it by its PID when the test ends. It returns the https:// URL and
// the access log's path.
func startNginx(t *testing.T, c testCert) (url, accessLog string) {
	t.Helper()
	bin := "/usr/sbin/nginx"
	if _, err := os.Stat(bin); err != nil {
		bin = need(t, "nginx")
	}
	dir := t.TempDir()
	port := freePort(t)
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(nginxConf, dir, port, c.CertFile, c.KeyFile)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGQUIT) // graceful stop of master and worker
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not listen on %s within 10 s: %s %s", addr, stderr.String(), log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "https://" + addr + "/", filepath.Join(dir, "access.log")
}

// freePort returns a TCP port of 127.0.0.1 free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// countLines counts each line's value in a file.
func countLines(t *testing.T, path string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			m[l]++
		}
	}
	return m
}

// nginx over TLS with a certificate made by the test: HTTP/1.1 (ALPN
// http/1.1; nginx offers h2 too), and HTTP/2 with 8 streams per
// connection; every request is in nginx's access log under its protocol.
func TestNginxTLSAndH2(t *testing.T) {
	cert := validCert(t, "nginx")
	url, accessLog := startNginx(t, cert)
	var want1, want2 int
	for _, h2 := range []bool{false, true} {
		d, err := New(Config{URL: url, HTTP2: h2, Timeout: 5 * time.Second, TLS: &TLSConfig{CACert: cert.CertFile}})
		if err != nil {
			t.Fatal(err)
		}
		for _, lc := range []load.Config{{EngineConfig: result.EngineConfig{Connections: 4, Pipeline: 8}}, {EngineConfig: result.EngineConfig{Connections: 4, Pipeline: 1, Rate: 500}}} {
			if !h2 && lc.Pipeline > 1 {
				lc.Pipeline = 1
			}
			res := runWindow(t, openEngine(t, d, lc), load.Window{Requests: 800, Duration: 20 * time.Second})
			clean(t, fmt.Sprintf("nginx h2=%v %+v", h2, lc), res)
			if h2 {
				want2 += int(res.Sent)
			} else {
				want1 += int(res.Sent)
			}
		}
		n := d.Negotiated()
		if n.TLSVersion != "TLS 1.3" || (h2 && n.ALPN != "h2") || (!h2 && n.ALPN != "http/1.1") || n.Resumed == 0 {
			t.Errorf("nginx h2=%v: negotiated %+v", h2, n)
		}
		t.Logf("nginx h2=%v: negotiated %+v", h2, *n)
	}
	// nginx writes its access log as each request ends: give it a moment
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got := countLines(t, accessLog)
		if got["HTTP/1.1"] == want1 && got["HTTP/2.0"] == want2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx logged %v, want %d HTTP/1.1 and %d HTTP/2.0", got, want1, want2)
		}
	}
}

package redisephemeral

import (
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/secret"
)

func TestParseVersion(t *testing.T) {
	v, ok := parseVersion("Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=ae4d7c971a948f0\n")
	if !ok || v != "7.0.15" {
		t.Fatalf("got %q, %v", v, ok)
	}
	if _, ok := parseVersion("KeyDB something"); ok {
		t.Fatal("parsed a version out of nothing")
	}
}

func TestParseInfo(t *testing.T) {
	m := parseInfo("# Stats\r\nkeyspace_hits:12\r\nkeyspace_misses:3\r\n\r\n# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n")
	want := map[string]string{"keyspace_hits": "12", "keyspace_misses": "3", "db0": "keys=1,expires=0,avg_ttl=0"}
	if len(m) != len(want) {
		t.Fatalf("got %v, want %v", m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Fatalf("%s = %q, want %q", k, m[k], v)
		}
	}
	if _, err := statsFromInfo(m); err == nil || !strings.Contains(err.Error(), "total_commands_processed") {
		t.Fatalf("statsFromInfo of incomplete INFO: %v", err)
	}
	m["total_commands_processed"] = "x"
	m["used_memory"] = "1"
	if _, err := statsFromInfo(m); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Fatalf("statsFromInfo with a bad number: %v", err)
	}
}

func TestConfigFile(t *testing.T) {
	o := Options{Password: secret.New(`a"b\c` + "\n"), MaxClients: 100, ExtraConfig: []string{"io-threads 2"}}
	conf := o.configFile("/tmp/d ir", 6390, "/tmp/d ir/redis.log")
	for _, want := range []string{
		"bind 127.0.0.1\n", "port 6390\n", `save ""` + "\n", "appendonly no\n", "daemonize no\n",
		`dir "/tmp/d ir"` + "\n", "maxclients 100\n", "io-threads 2\n",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("config lacks %q:\n%s", want, conf)
		}
	}
	// The password never goes to the file: redis-server reads it on stdin.
	if strings.Contains(conf, "requirepass") || strings.Contains(conf, "a\\\"b") {
		t.Errorf("the config file holds the password:\n%s", conf)
	}
	if got := o.secretConfig(); got != `requirepass "a\"b\\c\x0a"`+"\n" {
		t.Errorf("secretConfig = %q", got)
	}
	tls := Options{TLSCertFile: "c.pem", TLSKeyFile: "k.pem"}.configFile("/d", 7000, "/d/l")
	if !strings.Contains(tls, "port 0\n") || !strings.Contains(tls, "tls-port 7000\n") {
		t.Errorf("TLS config:\n%s", tls)
	}
}

package secret

import (
	"reflect"
	"testing"
)

func TestIsSecretName(t *testing.T) {
	secret := []string{
		"api_key", "X-Upstream-Key", "access_token", "Authorization", "Cookie", "Set-Cookie", "Proxy-Authorization",
		"X-Api-Key", "apiKey", "APIKEY", "token", "TOKENS", "password", "PGPASSWORD", "db-password", "--db-password",
		"passwd", "pwd", "DB_PWD", "secret", "client_secret", "AWS_SECRET_ACCESS_KEY", "auth", "oauth", "X-Auth",
		"session", "sessionid", "JSESSIONID", "PHPSESSID", "signature", "X-Amz-Signature", "sig", "credential",
		"credentials", "GOOGLE_APPLICATION_CREDENTIALS", "requirepass", "masterauth", "pass", "sslpassword", "accessToken",
		"HTTPAuthKey",
	}
	plain := []string{
		"host", "port", "user", "Content-Type", "Accept", "X-Request-Id", "keyspace", "author", "authority",
		"bypass", "passenger", "compass", "tokenizer", "PGPASSFILE", "PGDATABASE", "sslmode", "PATH", "HOME",
		"keyboard", "id", "name", "dbname", "", "-", "X-Forwarded-For", "Cache-Control", "pg-pk",
		"--token-env", "--token-file", "PASSWORD_FILE", "--tls-key-path", "dsn_env", "secretName",
	}
	for _, n := range secret {
		if !IsSecretName(n) {
			t.Errorf("IsSecretName(%q) = false, want true", n)
		}
	}
	for _, n := range plain {
		if IsSecretName(n) {
			t.Errorf("IsSecretName(%q) = true, want false", n)
		}
	}
}

func TestPolicyAddsNames(t *testing.T) {
	p := NewPolicy([]string{"X-Tenant"}, []string{"cb"})
	for _, tt := range []struct {
		name         string
		header, para bool
	}{
		{"x-tenant", true, false},
		{"X-TENANT", true, false},
		{"cb", false, true},
		{"Authorization", true, true},
		{"X-Other", false, false},
	} {
		if got := p.Header(tt.name); got != tt.header {
			t.Errorf("Header(%q) = %v, want %v", tt.name, got, tt.header)
		}
		if got := p.Param(tt.name); got != tt.para {
			t.Errorf("Param(%q) = %v, want %v", tt.name, got, tt.para)
		}
	}
	if !p.Name("--cb") || !p.Name("X-Tenant") || p.Name("--other") {
		t.Errorf("Name does not use the added names")
	}
	var zero Policy
	if zero.Header("x-tenant") || !zero.Header("Authorization") {
		t.Errorf("the zero policy is not the default rule")
	}
	if w := zero.With([]string{"X-Tenant"}, nil); !w.Header("x-tenant") || zero.Header("x-tenant") {
		t.Errorf("With changed the receiver or did not widen")
	}
}

func TestWords(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"X-Upstream-Key", []string{"x", "upstream", "key"}},
		{"accessToken", []string{"access", "token"}},
		{"HTTPAuthKey", []string{"http", "auth", "key"}},
		{"--db-password", []string{"db", "password"}},
		{"AWS_SECRET", []string{"aws", "secret"}},
		{"", nil},
	} {
		if got := Words(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

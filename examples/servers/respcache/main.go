// Command respcache is the in-repo stand-in for pg_local_cache's RESP
// endpoint: a small RESP server beside PostgreSQL that answers MGET (and
// GET) with the rows of a table as row_to_json text, and counts its hits
// and misses in a table a benchrig statistics query reads:
//
//	SELECT sum(hits)::bigint AS cache_hits, sum(misses)::bigint AS cache_misses FROM respcache_counters
//
// The DSN is read from the environment variable named by -dsn-env (never
// from the command line); the AUTH token from -token-env or -token-file.
// -miss-every N answers every Nth key with nil (and counts a miss), to see
// an assertion on the hits fail. It prints "listening on ADDR" once it
// accepts connections.
//
//	BENCHRIG_DSN=postgres://… RESPCACHE_TOKEN=s3cret respcache -listen 127.0.0.1:6380 \
//	    -key 'CRUD:db.public.items:{"id":{id}}' -table items
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "respcache:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("respcache", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:6380", "listen address (port 0 picks a free one)")
	key := fs.String("key", "item:{id}", "key template; {id} is the row's integer primary key")
	table := fs.String("table", "items", "table whose rows are served (primary key id)")
	dsnEnv := fs.String("dsn-env", "BENCHRIG_DSN", "environment variable holding the PostgreSQL DSN")
	tokenEnv := fs.String("token-env", "", "environment variable holding the AUTH token (none: no AUTH)")
	tokenFile := fs.String("token-file", "", "file holding the AUTH token")
	missEvery := fs.Int64("miss-every", 0, "answer every Nth key with nil and count a miss (0: never)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := config{table: *table, missEvery: *missEvery}
	var err error
	if cfg.prefix, cfg.suffix, err = splitTemplate(*key); err != nil {
		return err
	}
	if *missEvery < 0 || *missEvery > 1_000_000_000 {
		return fmt.Errorf("-miss-every: must be 0 to 1000000000, got %d", *missEvery)
	}
	if cfg.token, err = readToken(*tokenEnv, *tokenFile); err != nil {
		return err
	}
	dsn := os.Getenv(*dsnEnv)
	if dsn == "" {
		return fmt.Errorf("$%s is empty: the DSN is passed in the environment", *dsnEnv)
	}
	cfg.dsn = dsn
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	srv, err := newServer(ctx, cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	os.Stdout.Sync()
	go func() { <-ctx.Done(); ln.Close() }()
	err = srv.serve(ctx, ln)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// splitTemplate splits a key template at its {id}.
func splitTemplate(t string) (prefix, suffix string, err error) {
	i := strings.Index(t, "{id}")
	if i < 0 || strings.Contains(t[i+4:], "{id}") {
		return "", "", fmt.Errorf("-key: %q needs exactly one {id}", t)
	}
	return t[:i], t[i+4:], nil
}

// readToken reads the AUTH token from an environment variable or a file.
func readToken(env, file string) (string, error) {
	switch {
	case env != "" && file != "":
		return "", errors.New("give -token-env or -token-file, not both")
	case env != "":
		t := os.Getenv(env)
		if t == "" {
			return "", fmt.Errorf("-token-env: $%s is empty", env)
		}
		return t, nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("-token-file: %w", err)
		}
		t := strings.TrimRight(string(b), "\r\n")
		if t == "" {
			return "", fmt.Errorf("-token-file: %s is empty", file)
		}
		return t, nil
	}
	log.Print("no token: AUTH is not required")
	return "", nil
}

// Command hostilepg runs a hostile PostgreSQL proxy (package pgtest) for
// trying a client by hand: in front of -dsn, or of an ephemeral server it
// starts with benchrig's demo table (-rows rows). It prints the proxy's DSN
// and runs until interrupted.
//
//	hostilepg -behaviour mid-run-stall -after 20
//	benchrig pg --dsn "$(cat dsn)" -c 4 -d 3
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver/pgtest"
)

func main() {
	dsn := flag.String("dsn", "", "the real server's URL DSN (default: start an ephemeral server)")
	b := flag.String("behaviour", string(pgtest.Relay), "one of: relay, "+names())
	after := flag.Int64("after", 20, "executions of benchrig's statements relayed before a mid-run behaviour starts")
	rows := flag.Int64("rows", pgclient.DefaultRows, "rows of the ephemeral server's demo table")
	out := flag.String("o", "", "also write the proxy's DSN to this file")
	flag.Parse()
	if err := run(*dsn, pgtest.Behaviour(*b), *after, *rows, *out); err != nil {
		fmt.Fprintln(os.Stderr, "hostilepg:", err)
		os.Exit(1)
	}
}

func names() string {
	var s []string
	for _, b := range pgtest.Behaviours {
		s = append(s, string(b))
	}
	return strings.Join(s, ", ")
}

func run(dsn string, b pgtest.Behaviour, after, rows int64, out string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if dsn == "" {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		srv, err := pgephemeral.StartEphemeral(sctx, pgephemeral.Options{MaxConnections: 100})
		if err != nil {
			return err
		}
		defer srv.Stop(context.Background())
		conn, err := pgclient.Connect(sctx, srv.DSN())
		if err != nil {
			return err
		}
		err = pgclient.CreateDataset(sctx, conn, pgclient.Dataset{Rows: rows})
		conn.Close(context.Background())
		if err != nil {
			return err
		}
		dsn = srv.DSN()
	}
	p, err := pgtest.Start(dsn, b, pgtest.Options{After: after})
	if err != nil {
		return err
	}
	defer p.Close()
	fmt.Println(p.DSN())
	if out != "" {
		if err := os.WriteFile(out, []byte(p.DSN()+"\n"), 0o600); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return nil
}

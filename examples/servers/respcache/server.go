package main

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	wire "github.com/benchrig/benchrig/internal/resp"
)

// config is the server's configuration.
type config struct {
	dsn, token     string
	table          string
	prefix, suffix string
	missEvery      int64
}

// server answers RESP clients, one PostgreSQL connection per client.
type server struct {
	cfg    config
	query  string
	count  string
	slots  atomic.Int64 // counter rows handed out
	keys   atomic.Int64 // keys asked, for -miss-every
	hits   atomic.Int64 // for INFO
	misses atomic.Int64
	wg     sync.WaitGroup
}

// counterTable holds one row of counts per client connection, so that
// concurrent clients never wait on one another's row lock.
const counterTable = "respcache_counters"

// newServer checks the database and creates the counter table.
func newServer(ctx context.Context, cfg config) (*server, error) {
	ident := pgx.Identifier(strings.Split(cfg.table, "."))
	s := &server{cfg: cfg,
		query: "SELECT t.id, row_to_json(t)::text FROM " + ident.Sanitize() + " t WHERE t.id = ANY($1)",
		count: "INSERT INTO " + counterTable + " AS c (slot, hits, misses) VALUES ($1, $2, $3) " +
			"ON CONFLICT (slot) DO UPDATE SET hits = c.hits + EXCLUDED.hits, misses = c.misses + EXCLUDED.misses",
	}
	conn, err := pgx.Connect(ctx, cfg.dsn)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", scrub(err, cfg.dsn))
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+counterTable+" (slot bigint PRIMARY KEY, hits bigint NOT NULL, misses bigint NOT NULL)"); err != nil {
		return nil, fmt.Errorf("create %s: %w", counterTable, err)
	}
	var slots int64
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(slot), 0) FROM "+counterTable).Scan(&slots); err != nil {
		return nil, err
	}
	s.slots.Store(slots)
	if _, err := conn.Exec(ctx, s.query, []int64{1}); err != nil {
		return nil, fmt.Errorf("table %s: %w", cfg.table, err)
	}
	return s, nil
}

// scrub removes the DSN's password from an error.
func scrub(err error, dsn string) error {
	if c, perr := pgx.ParseConfig(dsn); perr == nil && c.Password != "" && strings.Contains(err.Error(), c.Password) {
		return errors.New(strings.ReplaceAll(err.Error(), c.Password, "xxxxx"))
	}
	return err
}

// serve accepts clients until the listener closes.
func (s *server) serve(ctx context.Context, ln net.Listener) error {
	defer s.wg.Wait()
	for {
		nc, err := ln.Accept()
		if err != nil {
			return err
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer nc.Close()
			stop := context.AfterFunc(ctx, func() { nc.Close() })
			defer stop()
			if err := s.client(ctx, nc); err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
				log.Printf("client %s: %v", nc.RemoteAddr(), err)
			}
		}()
	}
}

// client serves one connection.
func (s *server) client(ctx context.Context, nc net.Conn) error {
	rd := wire.NewReader(nc, wire.Limits{})
	w := bufio.NewWriterSize(nc, 64<<10)
	c := &session{s: s, authed: s.cfg.token == ""}
	defer c.close()
	var args [][]byte
	var out []byte
	for {
		var err error
		if args, err = rd.ReadCommand(args); err != nil {
			return err
		}
		if len(args) == 0 {
			continue
		}
		out, err = c.do(ctx, out[:0], args)
		if err != nil {
			return err
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
		if rd.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// session is one client's state.
type session struct {
	s      *server
	authed bool
	pg     *pgx.Conn
	slot   int64
	ids    []int64
	rows   map[int64][]byte
}

func (c *session) close() {
	if c.pg != nil {
		c.pg.Close(context.Background())
	}
}

// do runs one command and appends its reply to out. An error closes the
// connection.
func (c *session) do(ctx context.Context, out []byte, args [][]byte) ([]byte, error) {
	name := strings.ToUpper(string(args[0]))
	switch {
	case name == "AUTH":
		tok := args[len(args)-1]
		if len(args) < 2 || len(args) > 3 || subtle.ConstantTimeCompare(tok, []byte(c.s.cfg.token)) != 1 || c.s.cfg.token == "" {
			return wire.AppendError(out, "WRONGPASS invalid username-password pair or user is disabled."), nil
		}
		c.authed = true
		return wire.AppendSimpleString(out, "OK"), nil
	case name == "QUIT":
		return wire.AppendSimpleString(out, "OK"), io.EOF
	case !c.authed:
		return wire.AppendError(out, "NOAUTH Authentication required."), nil
	case name == "PING":
		return wire.AppendSimpleString(out, "PONG"), nil
	case name == "INFO":
		text := fmt.Sprintf("# Stats\r\nkeyspace_hits:%d\r\nkeyspace_misses:%d\r\n", c.s.hits.Load(), c.s.misses.Load())
		return wire.AppendBulkString(out, text), nil
	case name == "MGET" && len(args) >= 2, name == "GET" && len(args) == 2:
		vals, err := c.fetch(ctx, args[1:])
		if err != nil {
			return wire.AppendError(out, "ERR "+strings.ReplaceAll(err.Error(), "\r\n", " ")), nil
		}
		if name == "GET" {
			if vals[0] == nil {
				return wire.AppendNilBulk(out), nil
			}
			return wire.AppendBulk(out, vals[0]), nil
		}
		out = wire.AppendArrayHeader(out, len(vals))
		for _, v := range vals {
			if v == nil {
				out = wire.AppendNilBulk(out)
			} else {
				out = wire.AppendBulk(out, v)
			}
		}
		return out, nil
	}
	return wire.AppendError(out, "ERR unknown command or wrong number of arguments for '"+name+"'"), nil
}

// fetch reads the rows of keys, counts hits and misses in the counter
// table, and returns each key's value (nil: a miss).
func (c *session) fetch(ctx context.Context, keys [][]byte) ([][]byte, error) {
	if c.pg == nil {
		pg, err := pgx.Connect(ctx, c.s.cfg.dsn)
		if err != nil {
			return nil, fmt.Errorf("connect to PostgreSQL: %w", scrub(err, c.s.cfg.dsn))
		}
		c.pg, c.slot, c.rows = pg, c.s.slots.Add(1), map[int64][]byte{}
	}
	ids := c.ids[:0]
	pos := make([]int64, len(keys)) // id of each key, -1 when the key is not ours
	for i, k := range keys {
		pos[i] = c.s.parse(k)
		if pos[i] >= 0 {
			ids = append(ids, pos[i])
		}
	}
	c.ids = ids
	clear(c.rows)
	rows, err := c.pg.Query(ctx, c.s.query, ids)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id int64
		var j []byte
		if err := rows.Scan(&id, &j); err != nil {
			rows.Close()
			return nil, err
		}
		c.rows[id] = j
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([][]byte, len(keys))
	var hits, misses int64
	for i, id := range pos {
		n := c.s.keys.Add(1)
		v, ok := c.rows[id]
		if ok && !(c.s.cfg.missEvery > 0 && n%c.s.cfg.missEvery == 0) {
			out[i] = v
			hits++
		} else {
			misses++
		}
	}
	if _, err := c.pg.Exec(ctx, c.s.count, c.slot, hits, misses); err != nil {
		return nil, fmt.Errorf("count: %w", err)
	}
	c.s.hits.Add(hits)
	c.s.misses.Add(misses)
	return out, nil
}

// parse returns the id of a key of the template, or -1.
func (s *server) parse(k []byte) int64 {
	key := string(k)
	if !strings.HasPrefix(key, s.cfg.prefix) || !strings.HasSuffix(key, s.cfg.suffix) || len(key) < len(s.cfg.prefix)+len(s.cfg.suffix)+1 {
		return -1
	}
	id, err := strconv.ParseInt(key[len(s.cfg.prefix):len(key)-len(s.cfg.suffix)], 10, 64)
	if err != nil || id < 0 {
		return -1
	}
	return id
}

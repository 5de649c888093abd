# shellcheck shell=bash
# One ephemeral PostgreSQL for a bench script, in $work (which the script
# creates and removes): pg_init checks the binaries and, as root, runs the
# server as the postgres user; pg_start CONNECTIONS CPU starts it pinned,
# tuned for benchmarks (no fsync, no autovacuum), and sets port, dsn and
# postmaster; pg_items ROWS creates the seeds' items table; pg_stop (from
# the script's cleanup) stops it.
pg_init() {
	pgbin=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
	[ -x "$pgbin/pgbench" ] && [ -x "$pgbin/initdb" ] || { echo "PostgreSQL server binaries and pgbench are needed (PGBIN=…/bin)" >&2; exit 1; }
	chmod 755 "$work"
	as=()
	if [ "$(id -u)" = 0 ]; then
		id postgres >/dev/null 2>&1 || { echo "run as a user other than root, or create the postgres user" >&2; exit 1; }
		as=(runuser -u postgres --)
		chown postgres "$work"
	fi
	pg_started=
}

pg_start() {
	local connections=$1 cpu=$2
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"${as[@]}" "$pgbin/initdb" -D "$work/data" -U postgres -A trust --no-sync >"$work/initdb.log" 2>&1
	taskset -c "$cpu" "${as[@]}" "$pgbin/pg_ctl" -D "$work/data" -l "$work/server.log" -w -o \
		"-c port=$port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$work -c max_connections=$((connections + 10)) \
		 -c shared_buffers=128MB -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c jit=off -c autovacuum=off" \
		start >/dev/null
	pg_started=1
	postmaster=$(head -1 "$work/data/postmaster.pid")
	dsn="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
}

pg_items() {
	"$pgbin/psql" -q -X -v ON_ERROR_STOP=1 "$dsn" <<SQL
CREATE TABLE items (id bigint PRIMARY KEY, revision bigint NOT NULL DEFAULT 0, payload text NOT NULL);
INSERT INTO items SELECT i, 0, rpad('item-' || i || '-', 128, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')
	FROM generate_series(1, $1) i;
VACUUM (FREEZE, ANALYZE) items;
SQL
}

pg_stop() {
	[ -n "${pg_started:-}" ] && "${as[@]}" "$pgbin/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
}

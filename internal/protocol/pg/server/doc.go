// Package postgres is the PostgreSQL server kind: the system.System of a
// suite's postgres targets. It starts an ephemeral server
// (pgephemeral.StartEphemeral) or reaches one by DSN (PGServer), creates
// and resets the dataset, passes every pg path of the plan through the
// pre-flight and records its query plans, and gives each sample its pg
// driver, the server's process tree to sample and its statistics
// (pg_stat_database, the table's and the suite's own queries).
//
// A postgres target may also serve RESP, on an endpoint of its own or of a
// sidecar it starts beside the server (respserver reaches it), and be
// another target's companion.
package postgres

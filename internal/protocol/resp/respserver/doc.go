// Package respserver is a RESP system under test as both server kinds
// reach it: a redis-server or another RESP endpoint at an address (a
// postgres target's own endpoint or its sidecar's), or an ephemeral
// redis-server started for the run. StartRedis checks that it answers
// PING (after AUTH and TLS); the server gives each sample its RESP driver,
// its PING checks and its INFO statistics, and checks the connection
// reserve.
//
// It also fills the server cache-aside (generated demo rows, or the rows
// of a PostgreSQL table) and compares a probe batch of keys with the rows
// PostgreSQL returns for them (the pre-flight of verify_against_pg).
package respserver

// Package redis is the redis server kind: the system.System of a suite's
// redis targets. It starts an ephemeral redis-server or reaches an existing
// RESP endpoint (respserver.StartRedis), fills it under every key template
// of the plan's resp paths (demo rows, or cache-aside from a PostgreSQL
// table, verified against it when asked), and gives each sample its RESP
// driver and the server's INFO statistics. A redis target can be another
// target's companion.
package redis

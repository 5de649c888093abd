// Package history keeps a history of benchmark runs in a database: SQLite
// (embedded, pure Go) by default, or a team's PostgreSQL, one schema with
// versioned migrations. Add imports verified results files, one
// transaction per file and idempotent by the file's SHA-256; it stores
// each sample's figures and encoded latency histograms and the original
// file (compressed), which Export writes back byte for byte. Series are a
// figure of one (suite, cell, variant, host fingerprint, branch) across
// runs in start order; Show prints them and Doc draws them with package
// report, marking the change points a ChangePoints hook finds.
package history

// Package secret is benchrig's one redaction policy and its secret
// types. Every edge where text leaves benchrig (results files, reports,
// stdout, stderr, logs, another process's argv) goes through it:
//
//   - Value holds a credential; String, GoString, Format, MarshalJSON and
//     MarshalText all show Placeholder, the raw value only through Reveal.
//   - DSN holds a connection string; every printing and encoding shows it
//     with its passwords hidden by Policy.DSN (host, port, database, user
//     and options stay visible), the raw string only through Reveal.
//   - Policy decides which names are credentials (headers, query
//     parameters, environment variables, flags: a word part token, key,
//     secret, password, passwd, pwd, auth, session, signature, credential
//     or cookie, plus the names a suite or flag adds) and redacts URLs,
//     DSNs, argv, environments and free text by that rule, telling a Set
//     every value it hid.
//   - Set scrubs the values it holds from any later text, replacing them
//     only where they stand as whole tokens, never inside other words.
//
// Example:
//
//	var found secret.Set
//	p := secret.NewPolicy([]string{"X-Upstream-Key"}, nil)
//	shown := p.URL("https://u:hunter2@h/x?access_token=abc", &found)
//	// shown == "https://u:[redacted]@h/x?access_token=[redacted]"
//	msg := found.Scrub("login hunter2 failed in context abc")
//	// msg == "login [redacted] failed in context [redacted]"
package secret

package live

import (
	"crypto/sha256"
	"encoding/base64"
	"html"
	"strings"

	"github.com/benchrig/benchrig/internal/report"
)

// pageScript is the page's only script: it opens the event stream (with
// the page's own query, hence its token) and puts each update's
// fragments in place, keeping which folds the reader opened; at the end
// of the run it reloads the page, which is then the report.
const pageScript = `(function () {
  var conn = document.getElementById('conn');
  var es = new EventSource('events' + location.search);
  es.addEventListener('state', function (e) {
    var parts = JSON.parse(e.data), open = {};
    document.querySelectorAll('details[id]').forEach(function (d) { open[d.id] = d.open; });
    for (var k in parts) { var el = document.getElementById(k); if (el) el.innerHTML = parts[k]; }
    document.querySelectorAll('details[id]').forEach(function (d) { if (d.id in open) d.open = open[d.id]; });
    document.body.setAttribute('data-event', e.lastEventId);
    conn.textContent = 'Live: updated ' + new Date().toLocaleTimeString() + '.';
  });
  es.addEventListener('final', function () { es.close(); location.reload(); });
  es.onerror = function () { conn.textContent = 'Connection lost: retrying…'; };
})();`

// pageCSP allows the page its inline style and its one script (by hash),
// its event stream and nothing else.
var pageCSP = func() string {
	sum := sha256.Sum256([]byte(pageScript))
	return "default-src 'none'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; script-src 'sha256-" +
		base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}()

// liveCSS adds to the report's style sheet what only the live page has.
const liveCSS = `
.conn { color: #444; font-size: .9rem; margin: -.5rem 0 1rem; }
.progress { margin: .25rem 0 .5rem; }
.bar { height: 8px; background: #e3e3e3; border-radius: 4px; overflow: hidden; max-width: 900px; }
.bar span { display: block; height: 100%; background: #0072B2; }
.phase { color: #444; margin: .25rem 0; }
.none { color: #666; }
`

// livePage is the whole page with the latest parts in place: complete
// without its script, kept current by it.
func livePage(title string, parts map[string]string) []byte {
	t := "benchrig live"
	if title != "" {
		t += " · " + title
	}
	t = html.EscapeString(t)
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>` + t + `</title>
<link rel="icon" href="data:,">
<style>` + report.StyleSheet() + liveCSS + `</style>
</head>
<body>
<header>
<h1>` + t + `</h1>
<p id="conn" class="conn">Live: this page updates itself while the run goes on.</p>
</header>
<main>
<section><h2>Progress</h2><div id="status">` + parts["status"] + `</div></section>
<section><h2>In flight</h2><div id="current">` + parts["current"] + `</div></section>
<section><h2>Finished</h2><div id="finished">` + parts["finished"] + `</div></section>
<section><h2>Plan</h2><div id="plan">` + parts["plan"] + `</div></section>
</main>
<script>` + pageScript + `</script>
</body>
</html>
`)
	return []byte(b.String())
}

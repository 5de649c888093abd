package main

import (
	"strings"
	"testing"
)

// TestUnknownSubcommandIsUsage: a subcommand that does not exist (export
// csv, a help topic that is no command, a command of the root) is a usage
// error, exit 2, never help and exit 0; the message names the command that
// does what was asked, or the near names.
func TestUnknownSubcommandIsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "csv", "r.json"}, `unknown command "csv" for "benchrig export"; use benchrig report RESULTS.json -f csv`},
		{[]string{"export", "json", "r.json"}, "use benchrig report RESULTS.json -f json"},
		{[]string{"export", "html", "r.json"}, "use benchrig report RESULTS.json -o report.html"},
		{[]string{"export", "hgrn", "r.json"}, `unknown command "hgrn" for "benchrig export"; did you mean hgrm?`},
		{[]string{"export"}, "export needs a format: benchrig export hgrm RESULTS.json"},
		{[]string{"csv", "r.json"}, `unknown command "csv" for "benchrig"; use benchrig report RESULTS.json -f csv`},
		{[]string{"exprot", "hgrm"}, "did you mean export?"},
		{[]string{"help", "nope"}, `unknown command "nope" for "benchrig"; see benchrig --help`},
		{[]string{"help", "export", "csv"}, "use benchrig report RESULTS.json -f csv"},
	} {
		out, stderr, code := invoke(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, stderr, c.want)
		}
	}
	// help of a command that exists is still help.
	if out, _, code := invoke(t, "help", "export"); code != 0 || !strings.Contains(out, "hgrm") {
		t.Errorf("help export: exit %d\n%s", code, out)
	}
}

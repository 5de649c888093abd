package exitcode

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// commandHints name, for what an unknown command or export format asks
// for, the command that does it.
var commandHints = map[string]string{
	"csv":        "benchrig report RESULTS.json -f csv (one row per sample and figure)",
	"json":       "benchrig report RESULTS.json -f json (the computed summary)",
	"md":         "benchrig report RESULTS.json -o report.md",
	"markdown":   "benchrig report RESULTS.json -o report.md",
	"html":       "benchrig report RESULTS.json -o report.html",
	"text":       "benchrig report RESULTS.json",
	"txt":        "benchrig report RESULTS.json -o report.txt",
	"hdr":        "benchrig export hgrm RESULTS.json --case CASE -o DIR",
	"histogram":  "benchrig export hgrm RESULTS.json --case CASE -o DIR",
	"histograms": "benchrig export hgrm RESULTS.json --case CASE -o DIR",
	"diff":       "benchrig compare A.json B.json",
	"check":      "benchrig verify RESULTS.json",
	"validate":   "benchrig verify RESULTS.json (a results file), or benchrig plan SUITE.yaml (a suite)",
	"resume":     "benchrig run SUITE.yaml -o RESULTS.json --resume",
	"sha256":     "benchrig checksum RESULTS.json",
	"redis":      "benchrig resp",
	"postgres":   "benchrig pg",
	"postgresql": "benchrig pg",
	"https":      "benchrig http https://…",
	"h2":         "benchrig http --http2 (or an h2c:// URL)",
}

// UnknownCommand is the usage error (exit 2) for a command or subcommand
// of parent that does not exist: the command that does what it asks when
// one is known, else the near names, else where the commands are listed.
func UnknownCommand(parent *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, parent.CommandPath())
	if parent.SuggestionsMinimumDistance <= 0 {
		parent.SuggestionsMinimumDistance = 2 // cobra's default, set on the root only
	}
	if hint, ok := commandHints[strings.ToLower(name)]; ok {
		msg += "; use " + hint
	} else if near := parent.SuggestionsFor(name); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	} else {
		msg += "; see " + parent.CommandPath() + " --help"
	}
	return Usage(errors.New(msg))
}

// FromCobra is the error of root's Execute: cobra's own usage errors made
// usage errors, an unknown command's naming what to run instead.
func FromCobra(root *cobra.Command, err error) error {
	if err != nil && IsCobraUsage(err) {
		if m := unknownCommandRE.FindStringSubmatch(err.Error()); m != nil {
			return UnknownCommand(root, m[1])
		}
		return Usage(err)
	}
	return err
}

// unknownCommandRE matches cobra's error for an unknown command of the
// root: its name.
var unknownCommandRE = regexp.MustCompile(`^unknown command "(.*)" for "benchrig"`)

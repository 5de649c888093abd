package execute

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/benchrig/benchrig/internal/result"
)

// Output says where a run's results go: the same JSON Lines results file
// for `benchrig run` and every quick mode.
type Output struct {
	// Path is -o/--out ("" for a quick run: results kept in a temp file
	// only for --json).
	Path          string
	Force, Resume bool
	// ResumeChanged resumes although the targets' provenance changed.
	ResumeChanged bool
	// JSON prints the results file on stdout when the run ends.
	JSON bool
	// replace is set when path holds no complete header line: a new run
	// replaces it (absentIfHeaderless).
	replace bool
}

// absentIfHeaderless treats a results file with no complete header line
// as absent: the run that wrote it stopped before its header was whole (a
// full disk, a kill), so it holds no sample. It is said once on stderr; a
// plain run then replaces the file without --force, and --resume starts
// afresh instead of refusing it, as it does when there is no file at all.
func (o *Output) absentIfHeaderless(stderr io.Writer) {
	if o.Path == "" || o.Force || o.replace {
		return
	}
	absent, err := result.Headerless(o.Path)
	if errors.Is(err, os.ErrNotExist) && o.Resume {
		// killed before the file was made: --resume starts it
		fmt.Fprintf(stderr, "benchrig: %s does not exist: there is nothing to resume; a new run starts\n", o.Path)
		o.Resume, o.ResumeChanged = false, false
		return
	}
	if !absent {
		return
	}
	what := "a new run replaces it"
	if o.Resume {
		what = "there is nothing to resume: a new run starts and replaces it"
	}
	fmt.Fprintf(stderr, "benchrig: %s holds no complete header line (the run that wrote it stopped before its header was whole: a full disk? a kill?), so no sample: treated as absent; %s\n", o.Path, what)
	o.Resume, o.ResumeChanged, o.replace = false, false, true
}

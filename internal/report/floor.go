package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/benchrig/benchrig/internal/result"
)

// FloorLine is the sentence a report prints beside its figures about
// benchrig's own floor on the machine that ran them ("benchrig's own floor
// here: http p50 18 µs, p99 31 µs, 9.0 µs CPU per request"); "" when the
// file holds none.
func FloorLine(f *result.Floor) string {
	if f == nil {
		return ""
	}
	if f.Skipped != "" {
		return "benchrig's own floor here: not measured (" + f.Skipped + ")"
	}
	var parts []string
	for _, e := range f.Protocols {
		if e.Error != "" {
			parts = append(parts, fmt.Sprintf("%s not measured (%s)", e.Protocol, e.Error))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s p50 %s, p99 %s, %s µs CPU per request", e.Protocol,
			result.FormatUS(e.P50US), result.FormatUS(e.P99US), figureTo(e.ClientCPUUS, 1)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "benchrig's own floor here: " + strings.Join(parts, "; ") +
		" (one connection, closed loop, against a null peer on loopback: latencies or client CPU near these measure benchrig, not the target)"
}

// floorKV is the floor as a report's key fact, nil when there is none.
func floorKV(f *result.Floor) []KV {
	line := FloorLine(f)
	if line == "" {
		return nil
	}
	return []KV{{"benchrig's floor", strings.TrimPrefix(line, "benchrig's own floor here: ")}}
}

// FloorTable writes the floor of each protocol as a box table: requests,
// p50, p99 and client µs CPU per request, or why it was not measured.
func FloorTable(w io.Writer, f *result.Floor) error {
	p := &printer{w: w}
	bt := &table{}
	bt.add("Protocol", "Requests", "p50", "p99", "Mean round trip", "Client CPU µs/request")
	for _, e := range f.Protocols {
		if e.Error != "" && e.Requests == 0 {
			bt.add(e.Protocol, "–", "–", "–", "–", "not measured: "+e.Error)
			continue
		}
		bt.add(e.Protocol, count(e.Requests), result.FormatUS(e.P50US), result.FormatUS(e.P99US), figureTo(e.RoundTripUS, 1)+" µs", figureTo(e.ClientCPUUS, 1))
	}
	p.table(bt)
	return p.err
}

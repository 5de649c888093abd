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
	levels := false
	for i, e := range f.Protocols {
		if i > 0 && f.Protocols[i-1].Protocol == e.Protocol {
			continue // its other levels, below
		}
		if e.Error != "" {
			parts = append(parts, fmt.Sprintf("%s not measured (%s)", e.Protocol, e.Error))
			continue
		}
		part := fmt.Sprintf("%s p50 %s, p99 %s, %s µs CPU per request", e.Protocol,
			result.FormatUS(e.P50US), result.FormatUS(e.P99US), figureTo(e.ClientCPUUS, 1))
		var more []string
		for _, o := range f.Protocols[i+1:] {
			if o.Protocol != e.Protocol {
				break
			}
			if o.Error == "" {
				more = append(more, fmt.Sprintf("%s at %d", figureTo(o.ClientCPUUS, 1), o.Conns()))
			}
		}
		if e.Conns() != 1 {
			part += fmt.Sprintf(" at %d connections", e.Conns())
		}
		if len(more) > 0 {
			levels = true
			part += " (" + strings.Join(more, ", ") + " connections)"
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ""
	}
	how := " (one connection, closed loop, against a null peer on loopback: latencies or client CPU near these measure benchrig, not the target)"
	if levels {
		how = " (one connection unless named, closed loop, against a null peer on loopback: latencies or client CPU near these measure benchrig, not the target; the Resources table gives each case the floor at its own connections)"
	}
	return "benchrig's own floor here: " + strings.Join(parts, "; ") + how
}

// floorColumn is the client CPU per request of benchrig's floor at each
// case's own protocol and connection count ("–" where the run did not
// measure that level), beside the case's own client µs/request.
func floorColumn(f *result.Floor) (column, bool) {
	if f == nil || len(f.Protocols) == 0 {
		return column{}, false
	}
	return column{"Client floor µs/request", func(ss []*result.Sample) string {
		for _, s := range ss {
			if s.Config == nil {
				continue
			}
			if e := f.At(s.Protocol, s.Config.Engine.Connections); e != nil && e.Error == "" {
				return figureTo(e.ClientCPUUS, 1)
			}
		}
		return "–"
	}}, true
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
	bt.add("Protocol", "Connections", "Requests", "p50", "p99", "Mean round trip", "Client CPU µs/request")
	for _, e := range f.Protocols {
		conns := fmt.Sprint(e.Conns())
		if e.Error != "" && e.Requests == 0 {
			bt.add(e.Protocol, conns, "–", "–", "–", "–", "not measured: "+e.Error)
			continue
		}
		bt.add(e.Protocol, conns, count(e.Requests), result.FormatUS(e.P50US), result.FormatUS(e.P99US), figureTo(e.RoundTripUS, 1)+" µs", figureTo(e.ClientCPUUS, 1))
	}
	p.table(bt)
	return p.err
}

package http

import (
	"bytes"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2headers encodes one HTTP/2 connection's request header blocks (the
// goroutine path's h2conn and the event loop's h2lc both embed it): one
// HPACK encoder per connection, and the single request's block cached
// once it encodes to the same bytes every time.
type h2headers struct {
	enc *hpack.Encoder
	eb  bytes.Buffer
	// header block of the single request once it encodes to the same
	// bytes every time (the second encoding: every field indexed).
	cached  []byte
	encodes int
}

// resetHeaders starts a new connection's encoder, with no cached block.
func (h *h2headers) resetHeaders() {
	h.eb.Reset()
	h.enc = hpack.NewEncoder(&h.eb)
	h.cached, h.encodes = nil, 0
}

// tableSize applies the server's SETTINGS_HEADER_TABLE_SIZE: the cached
// block no longer holds.
func (h *h2headers) tableSize(v uint32) {
	h.enc.SetMaxDynamicTableSizeLimit(v)
	h.cached, h.encodes = nil, 0
}

// block returns request k of t's header block.
func (h *h2headers) block(t *target, k int) []byte {
	single := !t.multi()
	if single && h.cached != nil {
		return h.cached
	}
	h.eb.Reset()
	for _, f := range t.reqs[k].h2 {
		_ = h.enc.WriteField(f)
	}
	b := h.eb.Bytes()
	if single {
		// the second encoding indexes every field (sensitive ones stay
		// literal, never indexed): it no longer changes the table.
		if h.encodes++; h.encodes >= 2 {
			h.cached = append([]byte(nil), b...)
		}
	}
	return b
}

// writeHeaders writes a header block on fr as HEADERS and CONTINUATION
// frames of at most maxFrame bytes.
func writeHeaders(fr *http2.Framer, maxFrame uint32, id uint32, block []byte, end bool) error {
	mx := int(maxFrame)
	frag, rest := block, []byte(nil)
	if len(block) > mx {
		frag, rest = block[:mx], block[mx:]
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: frag, EndStream: end, EndHeaders: len(rest) == 0}); err != nil {
		return err
	}
	for len(rest) > 0 {
		n := min(len(rest), mx)
		if err := fr.WriteContinuation(id, n == len(rest), rest[:n]); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

package http

import (
	"bytes"
	"fmt"

	"golang.org/x/net/http2/hpack"
)

// headerDecoder is what the HTTP/2 loop asks of an HPACK decoder: x/net's
// (with an Exchange, which reads every field) or statusDecoder.
type headerDecoder interface {
	Write(p []byte) (int, error)
	Close() error
	SetEmitEnabled(bool)
}

var _ headerDecoder = (*hpack.Decoder)(nil)

// statusDecoder decodes a connection's response header blocks (HPACK, RFC
// 7541) for the one field the loop reads without an Exchange: :status,
// when it is the block's first field. It keeps the dynamic table exactly
// (what every index refers to, and each entry's size, so that evictions
// happen where the server's encoder makes them), but of an entry only its
// lengths and, for a :status entry, its value. x/net's decoder keeps every
// name and value as strings (an allocation each), indexed in two maps for
// an encoder's lookups: against a server that adds its fields to the table
// on every response (nginx does), that was 14 % of the client's CPU over
// HTTP/2, and garbage to collect.
//
// Write keeps a block's fragments; Close decodes the block. It accepts and
// refuses the blocks x/net's decoder does with emitting turned off after
// the first field (FuzzStatusDecoder checks the two against each other).
type statusDecoder struct {
	status *string // where the block's :status goes
	block  []byte  // the fragments of the block so far
	max    uint32  // the dynamic table's bound (the last size update, ≤ limit)
	limit  uint32  // SETTINGS_HEADER_TABLE_SIZE as advertised
	size   uint32  // the entries' total size
	ents   []dynEntry
	head   int // ents[head] is the oldest of the n entries (a ring)
	n      int
	maxStr int
	buf    bytes.Buffer // Huffman decoding
	// hlen caches the decoded lengths of short Huffman strings: a server
	// sends the same values again and again (nginx re-adds its fields to
	// the table on every response), and decoding is most of the work.
	hlen map[string]uint32
	// last is, per static-table name (1–61), the last short Huffman value
	// a literal of that name carried and its decoded length: nginx sends
	// the same fields in the same order on every response, mostly with the
	// same values, and comparing a few bytes here costs less than the map's
	// hash and probe (the map stays for the rest).
	last [len(staticNames)]lastValue
}

// lastValue is a value's Huffman bytes and its decoded length.
type lastValue struct {
	b []byte
	n uint32
}

// The length cache holds at most hlenEntries strings of at most hlenBytes
// bytes each (it is emptied when full).
const hlenEntries, hlenBytes = 128, 64

// dynEntry is what the decoder keeps of a table entry.
type dynEntry struct {
	nameLen, valueLen uint32
	status            bool   // its name is :status
	value             string // its value, for a :status entry
}

func (e dynEntry) size() uint32 { return e.nameLen + e.valueLen + 32 }

// staticNames are the lengths of the names of the static table's entries
// 1–61 (RFC 7541 Appendix A), and staticStatus the values of its :status
// entries (8–14), read from x/net's decoder once.
var staticNames, staticStatus = staticTable()

func staticTable() (names [62]uint32, status [62]string) {
	block := make([]byte, 0, 61)
	for i := 1; i <= 61; i++ {
		block = append(block, 0x80|byte(i))
	}
	i := 1
	d := hpack.NewDecoder(4096, func(f hpack.HeaderField) {
		names[i] = uint32(len(f.Name))
		if f.Name == ":status" {
			status[i] = f.Value
		}
		i++
	})
	if _, err := d.Write(block); err != nil || i != 62 {
		panic(fmt.Sprintf("hpack static table: %v after %d entries", err, i-1))
	}
	return names, status
}

// newStatusDecoder returns a decoder whose dynamic table holds up to
// tableSize bytes (the SETTINGS_HEADER_TABLE_SIZE advertised: 4096 by
// default), writing :status to *status and refusing strings over maxStr
// bytes (0: no bound).
func newStatusDecoder(tableSize uint32, maxStr int, status *string) *statusDecoder {
	// every entry is at least 32 bytes: tableSize/32 of them fill it
	return &statusDecoder{status: status, max: tableSize, limit: tableSize, maxStr: maxStr,
		ents: make([]dynEntry, tableSize/32+1)}
}

// SetEmitEnabled is a no-op: the decoder reads each block's first field
// only (it stands where x/net's decoder is re-enabled at each block).
func (d *statusDecoder) SetEmitEnabled(bool) {}

// Write keeps a fragment of the block (the loop bounds a block's size).
func (d *statusDecoder) Write(p []byte) (int, error) {
	d.block = append(d.block, p...)
	return len(p), nil
}

// errHpack is a malformed block, in x/net's words.
type errHpack string

func (e errHpack) Error() string { return "hpack: " + string(e) }

const errHpackTruncated = errHpack("truncated headers")

// Close decodes the block kept since the last Close.
func (d *statusDecoder) Close() error {
	b := d.block
	d.block = d.block[:0]
	first, firstRepr := true, true // the first field (emitted), representation
	for len(b) > 0 {
		c := b[0]
		var err error
		switch {
		case c&0x80 != 0: // indexed field
			var idx uint64
			if idx, b, err = readHpackInt(7, b); err != nil {
				return err
			}
			e, ok := d.at(idx)
			if !ok {
				return errHpack(fmt.Sprintf("invalid indexed representation index %d", idx))
			}
			if first && e.status {
				*d.status = e.value
			}
			first = false
		case c&0xe0 == 0x20: // dynamic table size update
			if !firstRepr && d.size > 0 {
				return errHpack("dynamic table size update MUST occur at the beginning of a header block")
			}
			var size uint64
			if size, b, err = readHpackInt(5, b); err != nil {
				return err
			}
			if size > uint64(d.limit) {
				return errHpack("dynamic table size update too large")
			}
			d.max = uint32(size)
			d.evict()
		default: // a literal: with incremental indexing (01), without (0000) or never (0001)
			prefix, indexed := uint8(4), c&0xc0 == 0x40
			if indexed {
				prefix = 6
			}
			if b, err = d.literal(prefix, indexed, first, b); err != nil {
				return err
			}
			first = false
		}
		firstRepr = false
	}
	return nil
}

// literal reads a literal field (RFC 7541 6.2) off b, adds it to the
// dynamic table when indexed, and keeps its value as :status when it is
// the block's first field and so named. Like x/net's decoder, it decodes
// the strings only of the first field and of indexed ones.
func (d *statusDecoder) literal(prefix uint8, indexed, first bool, b []byte) ([]byte, error) {
	idx, b, err := readHpackInt(prefix, b)
	if err != nil {
		return nil, err
	}
	var e dynEntry
	var name []byte
	nameHuff := false
	if idx > 0 {
		ref, ok := d.at(idx)
		if !ok {
			return nil, errHpack(fmt.Sprintf("invalid indexed representation index %d", idx))
		}
		e.nameLen, e.status = ref.nameLen, ref.status
	} else if name, nameHuff, b, err = d.readString(b); err != nil {
		return nil, err
	}
	value, valueHuff, b, err := d.readString(b)
	if err != nil {
		return nil, err
	}
	if !first && !indexed {
		return b, nil
	}
	if idx == 0 {
		n, err := d.decode(name, nameHuff)
		if err != nil {
			return nil, err
		}
		e.nameLen, e.status = uint32(n), n == len(":status") && d.text(name, nameHuff) == ":status"
	}
	var n int
	if e.status {
		if n, err = d.decode(value, valueHuff); err == nil {
			e.value = d.text(value, valueHuff)
		}
	} else {
		n, err = d.decodedLen(idx, value, valueHuff)
	}
	if err != nil {
		return nil, err
	}
	e.valueLen = uint32(n)
	if d.maxStr != 0 && (int(e.nameLen) > d.maxStr || n > d.maxStr) {
		return nil, hpack.ErrStringLength
	}
	if first && e.status {
		*d.status = e.value
	}
	if indexed {
		d.add(e)
	}
	return b, nil
}

// readString reads a string literal's raw bytes (Huffman-coded when huff).
func (d *statusDecoder) readString(b []byte) (s []byte, huff bool, rest []byte, err error) {
	if len(b) == 0 {
		return nil, false, nil, errHpackTruncated
	}
	huff = b[0]&0x80 != 0
	n, b, err := readHpackInt(7, b)
	if err != nil {
		return nil, false, nil, err
	}
	if d.maxStr != 0 && n > uint64(d.maxStr) {
		return nil, false, nil, hpack.ErrStringLength
	}
	if n > uint64(len(b)) {
		return nil, false, nil, errHpackTruncated
	}
	return b[:n], huff, b[n:], nil
}

// decode returns the decoded length of string s, Huffman-decoding it into
// d.buf when huff (text then reads it).
func (d *statusDecoder) decode(s []byte, huff bool) (int, error) {
	if !huff {
		return len(s), nil
	}
	d.buf.Reset()
	if _, err := hpack.HuffmanDecode(&d.buf, s); err != nil {
		return 0, err
	}
	return d.buf.Len(), nil
}

// decodedLen is decode's length alone, from the caches when s was seen:
// the last value of the literal's name (idx, a static-table name), then
// the map.
func (d *statusDecoder) decodedLen(idx uint64, s []byte, huff bool) (int, error) {
	if !huff || len(s) > hlenBytes {
		return d.decode(s, huff)
	}
	var last *lastValue
	if idx > 0 && idx < uint64(len(d.last)) {
		if last = &d.last[idx]; last.b != nil && string(last.b) == string(s) {
			return int(last.n), nil
		}
	}
	n, ok := d.hlen[string(s)]
	if !ok {
		k, err := d.decode(s, huff)
		if err != nil {
			return 0, err
		}
		if d.hlen == nil || len(d.hlen) >= hlenEntries {
			d.hlen = make(map[string]uint32, hlenEntries)
		}
		n = uint32(k)
		d.hlen[string(s)] = n
	}
	if last != nil {
		last.b, last.n = append(last.b[:0], s...), n
	}
	return int(n), nil
}

// text is s as text, right after decode(s, huff).
func (d *statusDecoder) text(s []byte, huff bool) string {
	if huff {
		return d.buf.String()
	}
	return string(s)
}

// at returns the entry index idx refers to: 1–61 the static table's, from
// 62 the dynamic table's, newest first.
func (d *statusDecoder) at(idx uint64) (dynEntry, bool) {
	switch {
	case idx == 0:
		return dynEntry{}, false
	case idx <= 61:
		return dynEntry{nameLen: staticNames[idx], status: staticStatus[idx] != "", value: staticStatus[idx]}, true
	case idx-62 >= uint64(d.n):
		return dynEntry{}, false
	}
	return d.ents[(d.head+d.n-1-int(idx-62))%len(d.ents)], true
}

// add adds e to the dynamic table as its newest entry, evicting the oldest
// ones until the table fits; an entry larger than the table empties it.
func (d *statusDecoder) add(e dynEntry) {
	if e.size() > d.max {
		d.empty()
		return
	}
	d.ents[(d.head+d.n)%len(d.ents)] = e
	d.n++
	d.size += e.size()
	d.evict()
}

// empty empties the dynamic table.
func (d *statusDecoder) empty() {
	for d.n > 0 {
		d.drop()
	}
}

// evict drops the oldest entries until the table fits its bound.
func (d *statusDecoder) evict() {
	for d.size > d.max && d.n > 0 {
		d.drop()
	}
}

// drop drops the oldest entry.
func (d *statusDecoder) drop() {
	d.size -= d.ents[d.head].size()
	d.ents[d.head] = dynEntry{}
	d.head = (d.head + 1) % len(d.ents)
	d.n--
}

// readHpackInt reads an integer with an n-bit prefix (RFC 7541 5.1) off b,
// refusing one of 63 bits or more as x/net's decoder does.
func readHpackInt(n uint8, b []byte) (uint64, []byte, error) {
	if len(b) == 0 {
		return 0, nil, errHpackTruncated
	}
	mask := uint64(1)<<n - 1
	i := uint64(b[0]) & mask
	if i < mask {
		return i, b[1:], nil
	}
	var m uint
	for b = b[1:]; len(b) > 0; b = b[1:] {
		c := b[0]
		i += uint64(c&127) << m
		if c&128 == 0 {
			return i, b[1:], nil
		}
		if m += 7; m >= 63 {
			return 0, nil, errHpack("varint integer overflow")
		}
	}
	return 0, nil, errHpackTruncated
}

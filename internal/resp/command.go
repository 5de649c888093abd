package resp

// ReadCommand reads one command, the server side of the protocol: an array of
// bulk strings ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), or an inline command (a
// line of space-separated words, as typed into telnet). It appends the
// arguments to args[:0] and returns it. The arguments alias a scratch buffer
// of the Reader and are valid until the next call on the Reader.
//
// At a clean end of input between commands it returns io.EOF. An empty inline
// line yields zero arguments and a nil error.
func (r *Reader) ReadCommand(args [][]byte) ([][]byte, error) {
	args = args[:0]
	if r.err != nil {
		return args, r.err
	}
	if len(r.stack) != 0 {
		r.err = r.protoErr("ReadCommand called inside an unfinished reply")
		return args, r.err
	}
	if err := r.ensure(1, true); err != nil {
		r.err = err
		return args, err
	}
	if r.buf[r.r] != byte(KindArray) {
		return r.readInline(args)
	}
	hdr, err := r.ReadReply()
	if err != nil {
		return args, err
	}
	if hdr.Nil || hdr.Len == 0 {
		r.err = r.protoErr("expected a command (an array of 1 or more bulk strings), got an empty or nil array")
		return args, r.err
	}
	// Later reads may move the buffer, so copy each argument into scratch
	// and slice them once all are in.
	r.scratch = r.scratch[:0]
	r.argEnds = r.argEnds[:0]
	for i := 0; i < hdr.Len; i++ {
		el, err := r.ReadReply()
		if err != nil {
			return args, err
		}
		if el.Kind != KindBulk || el.Nil {
			r.err = r.protoErr("expected command argument %d to be a bulk string, got %s", i, el.Kind)
			return args, r.err
		}
		r.scratch = append(r.scratch, el.Data...)
		r.argEnds = append(r.argEnds, len(r.scratch))
	}
	start := 0
	for _, end := range r.argEnds {
		args = append(args, r.scratch[start:end:end])
		start = end
	}
	return args, nil
}

// readInline reads an inline command: words separated by spaces or tabs on
// one CRLF- or LF-terminated line. Quoting is not supported.
func (r *Reader) readInline(args [][]byte) ([][]byte, error) {
	line, err := r.readInlineLine()
	if err != nil {
		r.err = err
		return args, err
	}
	r.scratch = append(r.scratch[:0], line...)
	for i := 0; i < len(r.scratch); {
		for i < len(r.scratch) && (r.scratch[i] == ' ' || r.scratch[i] == '\t') {
			i++
		}
		j := i
		for j < len(r.scratch) && r.scratch[j] != ' ' && r.scratch[j] != '\t' {
			j++
		}
		if j > i {
			args = append(args, r.scratch[i:j:j])
		}
		i = j
	}
	return args, nil
}

// readInlineLine returns the next line without its LF or CRLF.
func (r *Reader) readInlineLine() ([]byte, error) {
	for scanned := 0; ; scanned = r.w - r.r {
		for i := r.r + scanned; i < r.w; i++ {
			if r.buf[i] != '\n' {
				continue
			}
			end := i
			if end > r.r && r.buf[end-1] == '\r' {
				end--
			}
			if end-r.r > r.lim.MaxLine {
				return nil, r.limitErr("inline command of %d bytes exceeds MaxLine=%d", end-r.r, r.lim.MaxLine)
			}
			line := r.buf[r.r:end:end]
			r.advance(i + 1 - r.r)
			return line, nil
		}
		if r.w-r.r > r.lim.MaxLine+2 {
			return nil, r.limitErr("inline command longer than MaxLine=%d without a line end", r.lim.MaxLine)
		}
		if err := r.ensure(r.w-r.r+1, false); err != nil {
			return nil, err
		}
	}
}

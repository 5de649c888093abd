package message

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

const (
	// MaxMessage is the default bound of one message: 4 MiB (grpc-go's
	// default receive limit).
	MaxMessage = 4 << 20
	// MaxMessagesFile bounds a file of messages (ReadMessages), in bytes.
	MaxMessagesFile = 256 << 20
	// PrefixLen is the length of a gRPC message's prefix: the compressed
	// flag and the 4-byte big-endian length.
	PrefixLen = 5
)

// prefixHint says what ReadMessages wants, for an error at the start of a
// file.
const prefixHint = "the file must hold gRPC-framed messages (each: a flag byte 0, a 4-byte big-endian length, the protobuf bytes); a single message without a prefix is not accepted, nor are varint-delimited messages"

// ReadMessages reads a file of length-prefixed binary messages: each is the
// 5-byte gRPC prefix (flag 0, 4-byte big-endian length) followed by the
// protobuf bytes, as the messages go on the wire. (This is not ghz
// --binary's input, which is one bare message or varint-delimited ones.)
// Each message must decode as md (unknown fields are kept, not
// an error). At most max messages, each at most MaxMessage bytes, the file
// at most MaxMessagesFile bytes. Each element returned is a whole gRPC
// message, prefix included, ready to send.
func ReadMessages(path string, md protoreflect.MessageDescriptor, max int) ([][]byte, error) {
	if max < 1 {
		return nil, fmt.Errorf("%s: the bound of messages is %d, want 1 or more", path, max)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > MaxMessagesFile {
		return nil, fmt.Errorf("%s: %d bytes, over the bound of %d", path, st.Size(), MaxMessagesFile)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxMessagesFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxMessagesFile {
		return nil, fmt.Errorf("%s: more than %d bytes, the bound", path, MaxMessagesFile)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%s: no message (the file is empty)", path)
	}
	var msgs [][]byte
	for off := 0; off < len(data); {
		n := len(msgs) + 1
		at := func(format string, args ...any) error {
			err := fmt.Sprintf("%s: message %d at offset %d: %s", path, n, off, fmt.Sprintf(format, args...))
			if n == 1 {
				err += " (" + prefixHint + ")"
			}
			return errors.New(err)
		}
		if len(msgs) == max {
			return nil, at("more than %d messages, the bound", max)
		}
		rest := data[off:]
		if len(rest) < PrefixLen {
			return nil, at("%d bytes left, want a 5-byte length prefix", len(rest))
		}
		// The length first: a file of one message without a prefix is
		// then told by the absurd length its first bytes make.
		size := binary.BigEndian.Uint32(rest[1:PrefixLen])
		if size > MaxMessage {
			return nil, at("a length prefix says %d bytes, over the bound of %d", size, MaxMessage)
		}
		if int(size) > len(rest)-PrefixLen {
			return nil, at("a length prefix says %d bytes, the file has %d after it", size, len(rest)-PrefixLen)
		}
		if rest[0] != 0 {
			return nil, at("flag byte %d, want 0 (uncompressed)", rest[0])
		}
		end := PrefixLen + int(size)
		m := dynamicpb.NewMessage(md)
		if err := (proto.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(rest[PrefixLen:end], m); err != nil {
			return nil, at("does not decode as %s: %v", md.FullName(), err)
		}
		msgs = append(msgs, rest[:end:end])
		off += end
	}
	return msgs, nil
}

// Split walks the gRPC messages of a response body, calling fn with each
// (compressed: its flag was 1) and returning fn's first error. A body that
// is not a whole number of messages, a flag other than 0 or 1, or a length
// over max (MaxMessage when max ≤ 0) is an error, which says how the
// framing is broken without quoting the body. msg lies within body.
func Split(body []byte, max int, fn func(compressed bool, msg []byte) error) error {
	if max <= 0 {
		max = MaxMessage
	}
	for n := 1; len(body) > 0; n++ {
		if len(body) < PrefixLen {
			if n == 1 {
				return fmt.Errorf("gRPC message framing: a body of %d bytes, want a 5-byte prefix", len(body))
			}
			return fmt.Errorf("gRPC message framing: %d bytes after the last message, want a 5-byte prefix", len(body))
		}
		flag := body[0]
		if flag > 1 {
			return fmt.Errorf("gRPC message framing: message %d has the flag %d, want 0 or 1", n, flag)
		}
		size := uint64(binary.BigEndian.Uint32(body[1:PrefixLen]))
		if size > uint64(max) {
			return fmt.Errorf("gRPC message framing: message %d says %d bytes, over the bound of %d", n, size, max)
		}
		if size > uint64(len(body)-PrefixLen) {
			return fmt.Errorf("gRPC message framing: message %d says %d bytes, %d follow", n, size, len(body)-PrefixLen)
		}
		end := PrefixLen + int(size)
		if err := fn(flag == 1, body[PrefixLen:end:end]); err != nil {
			return err
		}
		body = body[end:]
	}
	return nil
}

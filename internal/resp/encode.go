package resp

import "strconv"

// Encoding: every function appends one RESP2 element to dst and returns the
// extended slice, in the manner of strconv.Append…; with a reused dst of
// sufficient capacity none of them allocates.

// AppendArrayHeader appends an array header "*n\r\n". A command is an array
// header followed by n bulk strings.
func AppendArrayHeader(dst []byte, n int) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

// AppendBulk appends b as a bulk string "$len\r\nb\r\n".
func AppendBulk(dst, b []byte) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(b)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// AppendBulkString appends s as a bulk string.
func AppendBulkString(dst []byte, s string) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// AppendBulkInt appends the decimal text of v as a bulk string (how commands
// carry numbers: "$3\r\n128\r\n").
func AppendBulkInt(dst []byte, v int64) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(decimalLen(v)), 10)
	dst = append(dst, '\r', '\n')
	dst = strconv.AppendInt(dst, v, 10)
	return append(dst, '\r', '\n')
}

// AppendCommand appends a whole command: an array of the args as bulk
// strings.
func AppendCommand(dst []byte, args ...[]byte) []byte {
	dst = AppendArrayHeader(dst, len(args))
	for _, a := range args {
		dst = AppendBulk(dst, a)
	}
	return dst
}

// AppendCommandString is AppendCommand for string arguments.
func AppendCommandString(dst []byte, args ...string) []byte {
	dst = AppendArrayHeader(dst, len(args))
	for _, a := range args {
		dst = AppendBulkString(dst, a)
	}
	return dst
}

// AppendSimpleString appends a simple string reply "+s\r\n". s must not
// contain CR or LF.
func AppendSimpleString(dst []byte, s string) []byte {
	dst = append(dst, '+')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// AppendError appends an error reply "-msg\r\n", e.g. "ERR unknown command".
// msg must not contain CR or LF.
func AppendError(dst []byte, msg string) []byte {
	dst = append(dst, '-')
	dst = append(dst, msg...)
	return append(dst, '\r', '\n')
}

// AppendInt appends an integer reply ":v\r\n".
func AppendInt(dst []byte, v int64) []byte {
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, v, 10)
	return append(dst, '\r', '\n')
}

// AppendNilBulk appends a nil bulk string "$-1\r\n" (a missing key).
func AppendNilBulk(dst []byte) []byte { return append(dst, "$-1\r\n"...) }

// AppendNilArray appends a nil array "*-1\r\n".
func AppendNilArray(dst []byte) []byte { return append(dst, "*-1\r\n"...) }

// decimalLen returns the number of bytes in the decimal text of v.
func decimalLen(v int64) int {
	n := 1
	u := uint64(v)
	if v < 0 {
		n++
		u = uint64(-v) // correct for math.MinInt64 too, as uint64
	}
	for u >= 10 {
		u /= 10
		n++
	}
	return n
}

package resp

// Default limits. Redis itself accepts bulk strings up to 512 MiB; a benchmark
// client has no use for values that large, so the default is lower.
const (
	DefaultMaxBulk  = 64 << 20 // bytes in one bulk string
	DefaultMaxArray = 1 << 20  // elements in one array
	DefaultMaxDepth = 8        // nested arrays
	DefaultMaxLine  = 64 << 10 // bytes in a simple string, error or integer line
)

// Limits bound what a Reader accepts, so that a hostile or confused peer cannot
// make it allocate without bound. A zero field takes its default. Exceeding a
// limit is an error wrapping ErrLimit, reported before any allocation for the
// oversized element.
type Limits struct {
	// MaxBulk is the largest bulk string length accepted, in bytes.
	MaxBulk int `json:"max_bulk"`
	// MaxArray is the largest array length accepted, in elements.
	MaxArray int `json:"max_array"`
	// MaxDepth is the deepest nesting of arrays accepted (a flat array is
	// depth 1).
	MaxDepth int `json:"max_depth"`
	// MaxLine is the longest simple string, error or integer line accepted,
	// in bytes, excluding the type byte and CRLF.
	MaxLine int `json:"max_line"`
}

// DefaultLimits returns the limits a zero Limits stands for.
func DefaultLimits() Limits {
	return Limits{
		MaxBulk:  DefaultMaxBulk,
		MaxArray: DefaultMaxArray,
		MaxDepth: DefaultMaxDepth,
		MaxLine:  DefaultMaxLine,
	}
}

// withDefaults fills zero (or negative) fields with their defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxBulk <= 0 {
		l.MaxBulk = d.MaxBulk
	}
	if l.MaxArray <= 0 {
		l.MaxArray = d.MaxArray
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxLine <= 0 {
		l.MaxLine = d.MaxLine
	}
	return l
}

package cliflag

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// IntList is a flag holding a comma-separated list of integers (-c 4,64,
// --batch 1,16,64) in *p: the first value given replaces the default, a
// repeated flag adds to the list.
type IntList struct {
	p   *[]int
	set bool
}

// Ints is the flag value of a list held in *p.
func Ints(p *[]int) *IntList { return &IntList{p: p} }

func (l *IntList) String() string {
	if l.p == nil {
		return ""
	}
	parts := make([]string, len(*l.p))
	for i, v := range *l.p {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

// Set implements pflag.Value.
func (l *IntList) Set(s string) error {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		v, err := strconv.Atoi(p)
		if err != nil {
			return fmt.Errorf("%q is not an integer (want a list such as 1,64)", p)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return errors.New("empty list (want a list such as 1,64)")
	}
	if !l.set {
		*l.p, l.set = nil, true
	}
	*l.p = append(*l.p, out...)
	return nil
}

// Type implements pflag.Value.
func (l *IntList) Type() string { return "ints" }

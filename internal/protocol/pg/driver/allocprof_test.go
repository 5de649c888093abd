package pg

import (
	"fmt"
	"runtime"
	"strings"
)

// The packages allocations are charged to.
const (
	module        = "github.com/benchrig/benchrig/"
	thisPackage   = module + "internal/protocol/pg/driver"
	evloopPackage = module + "internal/driver/evloop"
)

// owners counts allocations by the package of the innermost function of
// this module on their stacks ("" when none), with one stack each.
type owners struct {
	count map[string]int64
	stack map[string]string
}

// allocsByOwner runs f with every allocation sampled and returns the
// allocations f's goroutines made, by owner. Allocations made before the
// rate changed are not sampled, so the rate is changed, and everything
// before f published, by collections before the first reading.
func allocsByOwner(f func()) owners {
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	runtime.MemProfileRate = 1
	before := memRecords()
	f()
	after := memRecords()
	o := owners{count: map[string]int64{}, stack: map[string]string{}}
	for key, r := range after {
		n := r.AllocObjects - before[key].AllocObjects
		if n == 0 {
			continue
		}
		owner, text, mine := "", "", false
		frames := runtime.CallersFrames(r.Stack())
		for {
			fr, more := frames.Next()
			text += fmt.Sprintf("\t%s %s:%d\n", fr.Function, fr.File, fr.Line)
			if owner == "" && strings.HasPrefix(fr.Function, module) {
				owner = pkgOf(fr.Function)
			}
			mine = mine || fr.Function == thisPackage+".memRecords"
			if !more {
				break
			}
		}
		if mine {
			continue // the readings' own
		}
		o.count[owner] += n
		if _, ok := o.stack[owner]; !ok {
			o.stack[owner] = text
		}
	}
	return o
}

// pkgOf is the package path of a function's full name.
func pkgOf(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	if dot := strings.IndexByte(fn[slash+1:], '.'); dot >= 0 {
		return fn[:slash+1+dot]
	}
	return fn
}

// memRecords is the memory profile by stack, after collections that
// publish what was allocated so far.
func memRecords() map[[32]uintptr]runtime.MemProfileRecord {
	runtime.GC()
	runtime.GC()
	var rs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		rs = make([]runtime.MemProfileRecord, n+64)
		var ok bool
		if n, ok = runtime.MemProfile(rs, true); ok {
			break
		}
	}
	m := make(map[[32]uintptr]runtime.MemProfileRecord, n)
	for _, r := range rs[:n] {
		m[r.Stack0] = r
	}
	return m
}

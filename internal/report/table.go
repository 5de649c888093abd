package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// table draws a box table like autocannon's; the first row is the header.
type table struct {
	rows [][]string
	// sep[i] true draws a separator line before row i (i ≥ 2).
	sep map[int]bool
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) separator() {
	if t.sep == nil {
		t.sep = map[int]bool{}
	}
	t.sep[len(t.rows)] = true
}

func (t *table) render(w io.Writer) error {
	if len(t.rows) == 0 {
		return nil
	}
	n := 0
	for _, r := range t.rows {
		if len(r) > n {
			n = len(r)
		}
	}
	width := make([]int, n)
	for _, r := range t.rows {
		for i, c := range r {
			if l := utf8.RuneCountInString(c); l > width[i] {
				width[i] = l
			}
		}
	}
	line := func(l, m, r string) string {
		var b strings.Builder
		b.WriteString(l)
		for i, wd := range width {
			b.WriteString(strings.Repeat("─", wd+2))
			if i < n-1 {
				b.WriteString(m)
			}
		}
		b.WriteString(r + "\n")
		return b.String()
	}
	var b strings.Builder
	b.WriteString(line("┌", "┬", "┐"))
	for ri, r := range t.rows {
		if ri == 1 || t.sep[ri] && ri > 1 {
			b.WriteString(line("├", "┼", "┤"))
		}
		b.WriteString("│")
		for i := 0; i < n; i++ {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			pad := width[i] - utf8.RuneCountInString(c)
			if i == 0 {
				b.WriteString(" " + c + strings.Repeat(" ", pad) + " │")
			} else {
				b.WriteString(" " + strings.Repeat(" ", pad) + c + " │")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString(line("└", "┴", "┘"))
	_, err := io.WriteString(w, b.String())
	return err
}

// ms renders microseconds as milliseconds with two decimals.
func ms(us float64) string { return fmt.Sprintf("%.2f ms", us/1000) }

// count renders an integer with thousands separators.
func count(n int64) string {
	s := fmt.Sprintf("%d", n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// bytesSI renders a byte count like autocannon (kB, MB: powers of 1000).
func bytesSI(v float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	i := 0
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", v)
	}
	return fmt.Sprintf("%.2f %s", v, units[i])
}

// mib renders bytes in MiB.
func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

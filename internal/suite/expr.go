package suite

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// An assertion is a small boolean expression over a sample's counters and
// statistics deltas, e.g. `cache_hits == requests * keys and errors == 0`:
//
//	assertion  = comparison { "and" comparison }
//	comparison = sum ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) sum
//	sum        = term { ( "+" | "-" | "−" ) term }
//	term       = unary { ( "*" | "×" | "/" | "÷" ) unary }
//	unary      = [ "-" | "−" ] primary
//	primary    = integer | name | "(" sum ")"
//
// Integers are decimal; names are letters, digits and '_' (not starting
// with a digit). Arithmetic is exact on integers up to 2⁵³; ÷ is exact
// division (7 / 2 = 3.5), and a division by zero fails the assertion.

// Expr is a parsed assertion.
type Expr struct {
	// Source is the text as written.
	Source string
	// Terms are the comparisons joined by "and".
	Terms []Comparison
}

// Comparison is one "left op right" of an assertion.
type Comparison struct {
	Left, Right *Arith
	Op          string
	// Text is the comparison's source text.
	Text string
}

// Arith is an arithmetic expression node: a number, a name, or an
// operator applied to two operands (Neg: one).
type Arith struct {
	Op          byte // 0 number or name; '+', '-', '*', '/'; 'n' negation
	Num         float64
	Name        string
	Left, Right *Arith
	// Text is the node's source text; Off its byte offset in Source.
	Text string
	Off  int
}

// ExprError is a problem in an assertion at byte offset Off of its text.
type ExprError struct {
	Off int
	Msg string
}

func (e *ExprError) Error() string { return fmt.Sprintf("at offset %d: %s", e.Off, e.Msg) }

// exprToken is one lexical token of an assertion.
type exprToken struct {
	kind byte // 'n' number, 'i' name, 'o' operator, '(' ')', 0 end
	text string
	off  int
}

// maxExprLen bounds an assertion's text.
const maxExprLen = 4096

// lexExpr splits src into tokens.
func lexExpr(src string) ([]exprToken, error) {
	if len(src) > maxExprLen {
		return nil, &ExprError{0, fmt.Sprintf("too long: %d bytes, at most %d", len(src), maxExprLen)}
	}
	var out []exprToken
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			if j < len(src) && (src[j] == '.' || isNameByte(src[j])) {
				k := j
				for k < len(src) && (src[k] == '.' || isNameByte(src[k]) || src[k] >= '0' && src[k] <= '9') {
					k++
				}
				return nil, &ExprError{i, fmt.Sprintf("%q is not an integer; accepted: decimal integers such as 100", src[i:k])}
			}
			out = append(out, exprToken{'n', src[i:j], i})
			i = j
		case isNameByte(c):
			j := i
			for j < len(src) && (isNameByte(src[j]) || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			out = append(out, exprToken{'i', src[i:j], i})
			i = j
		case c == '(' || c == ')':
			out = append(out, exprToken{c, src[i : i+1], i})
			i++
		default:
			op, n := exprOperator(src[i:])
			if n == 0 {
				return nil, &ExprError{i, fmt.Sprintf("unexpected %q; accepted: integers, names, + - * / (or × ÷ −), == != < <= > >=, and, parentheses", firstRune(src[i:]))}
			}
			out = append(out, exprToken{'o', op, i})
			i += n
		}
	}
	return append(out, exprToken{0, "", len(src)}), nil
}

func isNameByte(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func firstRune(s string) string {
	for _, r := range s {
		return string(r)
	}
	return ""
}

// exprOperator reads an operator at the start of s: its canonical form and
// its length in bytes (0: none).
func exprOperator(s string) (string, int) {
	for _, o := range []struct{ text, op string }{
		{"==", "=="}, {"!=", "!="}, {"<=", "<="}, {">=", ">="}, {"≤", "<="}, {"≥", ">="}, {"≠", "!="},
		{"<", "<"}, {">", ">"}, {"+", "+"}, {"-", "-"}, {"−", "-"}, {"*", "*"}, {"×", "*"}, {"/", "/"}, {"÷", "/"},
	} {
		if strings.HasPrefix(s, o.text) {
			return o.op, len(o.text)
		}
	}
	return "", 0
}

// exprParser is a recursive-descent parser over the tokens.
type exprParser struct {
	src  string
	toks []exprToken
	i    int
}

func (p *exprParser) peek() exprToken { return p.toks[p.i] }
func (p *exprParser) next() exprToken { t := p.toks[p.i]; p.i++; return t }

// ParseExpr parses an assertion. The error is an *ExprError with the
// offset of the problem.
func ParseExpr(src string) (*Expr, error) {
	toks, err := lexExpr(src)
	if err != nil {
		return nil, err
	}
	if len(toks) == 1 {
		return nil, &ExprError{0, "empty assertion; e.g. errors == 0"}
	}
	p := &exprParser{src: src, toks: toks}
	e := &Expr{Source: src}
	for {
		c, err := p.comparison()
		if err != nil {
			return nil, err
		}
		e.Terms = append(e.Terms, c)
		t := p.peek()
		if t.kind == 0 {
			return e, nil
		}
		if t.kind == 'i' && t.text == "and" {
			p.next()
			continue
		}
		return nil, &ExprError{t.off, fmt.Sprintf("expected \"and\" or the end after a comparison, got %q", t.text)}
	}
}

var comparisonOps = map[string]bool{"==": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true}

func (p *exprParser) comparison() (Comparison, error) {
	start := p.peek().off
	l, err := p.sum()
	if err != nil {
		return Comparison{}, err
	}
	t := p.peek()
	if t.kind != 'o' || !comparisonOps[t.text] {
		got := "the end"
		if t.kind != 0 {
			got = strconv.Quote(t.text)
		}
		return Comparison{}, &ExprError{t.off, fmt.Sprintf("expected a comparison (== != < <= > >=) after %q, got %s: an assertion must be true or false", strings.TrimSpace(p.src[start:t.off]), got)}
	}
	p.next()
	r, err := p.sum()
	if err != nil {
		return Comparison{}, err
	}
	if n := p.peek(); n.kind == 'o' && comparisonOps[n.text] {
		return Comparison{}, &ExprError{n.off, "comparisons do not chain; join them with and: a < b and b < c"}
	}
	return Comparison{Left: l, Right: r, Op: t.text, Text: strings.TrimSpace(p.src[start:p.peek().off])}, nil
}

func (p *exprParser) sum() (*Arith, error) {
	return p.binary(p.term, "+", "-")
}

func (p *exprParser) term() (*Arith, error) {
	return p.binary(p.unary, "*", "/")
}

func (p *exprParser) binary(operand func() (*Arith, error), ops ...string) (*Arith, error) {
	l, err := operand()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != 'o' || (t.text != ops[0] && t.text != ops[1]) {
			return l, nil
		}
		p.next()
		r, err := operand()
		if err != nil {
			return nil, err
		}
		end := p.peek().off
		l = &Arith{Op: t.text[0], Left: l, Right: r, Off: l.Off, Text: strings.TrimSpace(p.src[l.Off:end])}
	}
}

func (p *exprParser) unary() (*Arith, error) {
	if t := p.peek(); t.kind == 'o' && t.text == "-" {
		p.next()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &Arith{Op: 'n', Left: x, Off: t.off, Text: strings.TrimSpace(p.src[t.off:p.peek().off])}, nil
	}
	return p.primary()
}

func (p *exprParser) primary() (*Arith, error) {
	t := p.next()
	switch t.kind {
	case 'n':
		v, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil || v > 1<<53 {
			return nil, &ExprError{t.off, fmt.Sprintf("integer %s is out of range (at most 2⁵³ = %d)", t.text, int64(1)<<53)}
		}
		return &Arith{Num: float64(v), Text: t.text, Off: t.off}, nil
	case 'i':
		if t.text == "and" {
			return nil, &ExprError{t.off, "expected a number, a name or '(' before \"and\""}
		}
		return &Arith{Name: t.text, Text: t.text, Off: t.off}, nil
	case '(':
		x, err := p.sum()
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != ')' {
			if c.kind == 'o' && comparisonOps[c.text] {
				return nil, &ExprError{c.off, "parentheses hold arithmetic only; a comparison goes outside them"}
			}
			return nil, &ExprError{c.off, fmt.Sprintf("expected ')' to close the '(' at offset %d", t.off)}
		}
		x = &Arith{Op: '(', Left: x, Off: t.off, Text: strings.TrimSpace(p.src[t.off:p.peek().off])}
		return x, nil
	case 0:
		return nil, &ExprError{t.off, "unexpected end: expected a number, a name or '('"}
	}
	return nil, &ExprError{t.off, fmt.Sprintf("unexpected %q: expected a number, a name or '('", t.text)}
}

// Names lists the names the assertion reads, each once, in order of first
// use, with the offset of that use.
func (e *Expr) Names() []NameUse {
	var out []NameUse
	seen := map[string]bool{}
	var walk func(a *Arith)
	walk = func(a *Arith) {
		if a == nil {
			return
		}
		if a.Name != "" && !seen[a.Name] {
			seen[a.Name] = true
			out = append(out, NameUse{a.Name, a.Off})
		}
		walk(a.Left)
		walk(a.Right)
	}
	for _, c := range e.Terms {
		walk(c.Left)
		walk(c.Right)
	}
	return out
}

// NameUse is a name of an assertion and the byte offset of its first use.
type NameUse struct {
	Name string
	Off  int
}

// Failure is a comparison of an assertion evaluated on a sample (one that
// did not hold, unless Holds), with both sides' values.
type Failure struct {
	Comparison  Comparison
	Left, Right float64
	// Holds is true for a comparison that held (EvalAll).
	Holds bool
	// Err, when set, says why the comparison could not be evaluated (a
	// missing value, a division by zero).
	Err string
}

// Values names the values of the comparison's sides that are not plain
// numbers: "cache_hits = 6336, requests * keys = 6400".
func (f Failure) Values() string {
	c := f.Comparison
	if f.Err != "" {
		return f.Err
	}
	var parts []string
	for _, side := range []struct {
		a *Arith
		v float64
	}{{c.Left, f.Left}, {c.Right, f.Right}} {
		if side.a.Op != 0 || side.a.Name != "" {
			parts = append(parts, side.a.Text+" = "+FormatNumber(side.v))
		}
	}
	return strings.Join(parts, ", ")
}

// String formats the failure for a verdict: `cache_misses == 0:
// cache_misses = 64`.
func (f Failure) String() string {
	return f.Comparison.Text + ": " + f.Values()
}

// Eval evaluates the assertion with the values of vars and returns the
// comparisons that did not hold (none: the assertion holds).
func (e *Expr) Eval(vars map[string]float64) []Failure {
	var out []Failure
	for _, f := range e.EvalAll(vars) {
		if !f.Holds {
			out = append(out, f)
		}
	}
	return out
}

// EvalAll evaluates every comparison of the assertion, those that hold
// included (Holds).
func (e *Expr) EvalAll(vars map[string]float64) []Failure {
	out := make([]Failure, 0, len(e.Terms))
	for _, c := range e.Terms {
		l, lerr := c.Left.eval(vars)
		r, rerr := c.Right.eval(vars)
		if lerr != nil || rerr != nil {
			out = append(out, Failure{Comparison: c, Err: errors2(lerr, rerr)})
			continue
		}
		out = append(out, Failure{Comparison: c, Left: l, Right: r, Holds: compare(c.Op, l, r)})
	}
	return out
}

func errors2(a, b error) string {
	if a != nil {
		return a.Error()
	}
	return b.Error()
}

func compare(op string, l, r float64) bool {
	switch op {
	case "==":
		return l == r
	case "!=":
		return l != r
	case "<":
		return l < r
	case "<=":
		return l <= r
	case ">":
		return l > r
	case ">=":
		return l >= r
	}
	return false
}

func (a *Arith) eval(vars map[string]float64) (float64, error) {
	switch a.Op {
	case 0:
		if a.Name == "" {
			return a.Num, nil
		}
		v, ok := vars[a.Name]
		if !ok {
			return 0, fmt.Errorf("%s has no value in this sample", a.Name)
		}
		return v, nil
	case '(':
		return a.Left.eval(vars)
	case 'n':
		v, err := a.Left.eval(vars)
		return -v, err
	}
	l, err := a.Left.eval(vars)
	if err != nil {
		return 0, err
	}
	r, err := a.Right.eval(vars)
	if err != nil {
		return 0, err
	}
	switch a.Op {
	case '+':
		return l + r, nil
	case '-':
		return l - r, nil
	case '*':
		return l * r, nil
	}
	if r == 0 {
		return 0, fmt.Errorf("division by zero in %s (%s = 0)", a.Text, a.Right.Text)
	}
	return l / r, nil
}

// FormatNumber prints a value of an assertion: integers without a
// fraction, others with up to 6 significant decimals.
func FormatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// SampleCounters are the names an assertion may use for a sample's own
// counters (see AssertionVars), beside the statistics deltas.
var SampleCounters = []string{"requests", "sent", "errors", "timeouts", "unexpected", "unanswered", "keys", "connections", "pipeline", "scheduled", "late", "dropped"}

// sortedNames returns names sorted, for messages.
func sortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

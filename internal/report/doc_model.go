package report

// Doc is a report independent of how it is rendered: the Markdown and HTML
// renderers (and the terminal, for compare) draw the same document, so a
// figure cannot differ between formats. Builders (SuiteDoc, CompareDoc…)
// make Docs from result records; renderers never compute figures.
type Doc struct {
	Title string
	// Notice is the verification notice of the files it reports when one
	// does not verify (result.Report.Notice: a headline, then a line per
	// problem): every format shows it first, before the title.
	Notice []string
	// Meta are the document's key facts, in order: tool, host, suite,
	// files and their checksums.
	Meta []KV
	// Notes are warnings a reader must see before the figures: smoke
	// results, an incomplete file, a saturated client, failed samples.
	Notes    []string
	Sections []Section
}

// KV is one key fact.
type KV struct{ Key, Value string }

// Section is a titled part of a report: paragraphs, then charts, then
// tables, in that order.
type Section struct {
	Title  string
	Text   []string
	Charts []Chart
	Tables []Table
	// Groups follow the tables: one per case of an over-time section.
	Groups []Group
}

// Group is the part of a section about one case: its paragraphs and
// charts (the repeats overlaid), then the details of each sample.
type Group struct {
	Title   string
	Text    []string
	Charts  []Chart
	Details []Detail
}

// Detail is a part a reader opens when they want it (one sample's charts
// over time): collapsed in HTML unless Open; other formats show its text
// and tables.
type Detail struct {
	Summary string
	Open    bool
	Text    []string
	Charts  []Chart
	Tables  []Table
}

// Table is a table of text cells: the first Labels columns (at least one)
// are labels, left aligned; the others are figures, right aligned.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
	Labels  int
}

// labels is the number of label columns of t (at least 1).
func (t Table) labels() int { return max(t.Labels, 1) }

// ChartKind says how a chart's series are drawn.
type ChartKind int

const (
	// Bars draws, for each category, one bar per series at the point's Y
	// with a whisker from Lo to Hi (median [min–max] across repeats).
	Bars ChartKind = iota
	// Lines draws each series as a line through its points (X, Y), on a
	// logarithmic X axis when LogX is set (latency by percentile: X is
	// the distance to 100 %, 1/(1-q), as HdrHistogram plots do).
	Lines
)

// Chart is a chart of one figure.
type Chart struct {
	Kind  ChartKind
	Title string
	// Unit labels the Y axis ("req/s", "ms").
	Unit string
	// Categories are the groups of a Bars chart, in order (the cases).
	Categories []string
	// XLabels, for Lines, name X values on the axis (X → "99 %").
	XLabels map[float64]string
	LogX    bool
	// LogY draws the Y axis logarithmically, said on the axis (latencies
	// that span decades, bars of 400 beside 52,000); points whose Y is
	// not above 0 are not drawn.
	LogY bool
	// XUnit names the X axis' unit ("s"); when XMax > XMin the X axis
	// spans exactly XMin…XMax (panels sharing one time axis).
	XUnit      string
	XMin, XMax float64
	// Bands shade spans of X, each labelled (the phases of a sample).
	Bands []Band
	// OverTime marks a panel of figures over time: drawn small, in a grid,
	// without a table of its figures (the results file holds them).
	OverTime bool
	Series   []Series
}

// Band is a shaded span of a Lines chart's X axis.
type Band struct {
	Name     string
	From, To float64
}

// Series is one variant of a chart.
type Series struct {
	Name string
	// Points: for Bars one per category, in the categories' order;
	// Missing for a category without the figure.
	Points []Point
	// Dashed draws the line dashed (a second figure of the same series:
	// p50 beside p99).
	Dashed bool
}

// Point is one value of a series.
type Point struct {
	X, Y    float64
	Lo, Hi  float64 // the whisker of a bar, the band around a line (min and max across repeats); both 0 = none
	Missing bool
}

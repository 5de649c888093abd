// Package report renders results for people: the terminal tables of a quick
// run (autocannon's tables and more), and later Markdown, HTML and A/B
// comparisons. Reporters are func(io.Writer, …) error over result records;
// they never see live state.
//
//	var buf bytes.Buffer
//	err := report.Terminal(&buf, &result.Sample{Load: &result.Load{}}, report.TerminalOptions{})
//	_ = err
package report

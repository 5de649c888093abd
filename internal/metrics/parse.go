package metrics

import (
	"fmt"
	"io"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// maxPerFamily bounds the labelled series kept of one family (a family
// with a label per route or per status code could hold thousands).
const maxPerFamily = 16

// Parse reads the Prometheus text format from r and returns the values of
// the families named in series, by series name (see result.MetricsPoint),
// and the names asked for that the text does not hold. Counters, gauges
// and untyped metrics give their value; summaries and histograms their
// _sum and _count. A malformed text is an error naming the line.
func Parse(r io.Reader, series []string) (values map[string]float64, missing []string, err error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, nil, fmt.Errorf("malformed Prometheus text: %w", err)
	}
	values = map[string]float64{}
	for _, name := range series {
		f, ok := fams[name]
		if !ok || len(f.GetMetric()) == 0 {
			missing = append(missing, name)
			continue
		}
		ms := f.GetMetric()
		if len(ms) > maxPerFamily {
			ms = ms[:maxPerFamily]
		}
		for _, m := range ms {
			key := seriesKey(name, m.GetLabel())
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				values[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				values[key] = m.GetGauge().GetValue()
			case dto.MetricType_SUMMARY:
				values[seriesKey(name+"_sum", m.GetLabel())] = m.GetSummary().GetSampleSum()
				values[seriesKey(name+"_count", m.GetLabel())] = float64(m.GetSummary().GetSampleCount())
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				values[seriesKey(name+"_sum", m.GetLabel())] = m.GetHistogram().GetSampleSum()
				values[seriesKey(name+"_count", m.GetLabel())] = float64(m.GetHistogram().GetSampleCount())
			default:
				values[key] = m.GetUntyped().GetValue()
			}
		}
	}
	return values, missing, nil
}

// seriesKey names one metric of a family: the family's name alone without
// labels, else name{a="x",b="y"} with the labels sorted.
func seriesKey(name string, labels []*dto.LabelPair) string {
	if len(labels) == 0 {
		return name
	}
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = fmt.Sprintf("%s=%q", l.GetName(), l.GetValue())
	}
	sort.Strings(parts)
	return name + "{" + strings.Join(parts, ",") + "}"
}

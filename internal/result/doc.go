// Package result defines the records that cross from running to reporting:
// what one load window measured (Load), the latency distributions (Latency),
// the health verdict (Verdict) and the figures of the client. Everything here
// is plain data with JSON tags; reporters read these records from files and
// never live state.
//
// Latency histograms are stored in HdrHistogram's V2 compressed encoding so a
// results file can be merged again later:
//
//	h, err := lat.Decode()
//	if err == nil {
//		fmt.Println(h.ValueAtQuantile(99))
//	}
package result

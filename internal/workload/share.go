package workload

// Keys are a pure function of a request's sequence number (Keys(seq)), so a
// workload split over agents is partitioned by sequence number: share index
// of count sends the requests seq ≡ index (mod count), and the shares
// together issue exactly the single-machine key sequence. For cold, that is
// every row read exactly once across all the agents.

// ShareSeq is the sequence number of share index's j-th request when the
// requests are split count ways.
func ShareSeq(index, count int, j uint64) uint64 { return uint64(index) + j*uint64(count) }

// ShareRequests is how many of the workload's natural requests (Requests():
// a cold sweep's ceil(Rows / Batch)) belong to share index of count; 0 for
// a workload without a natural count, or a share out of range.
func (w *Workload) ShareRequests(index, count int) int64 {
	n := w.Requests()
	if n == 0 || count < 1 || index < 0 || index >= count {
		return 0
	}
	q := n / int64(count)
	if int64(index) < n%int64(count) {
		q++
	}
	return q
}

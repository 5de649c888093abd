// Package workload derives, for every operation of a run, which class of
// operation it is (read or write) and which keys it touches.
//
// A workload is a pure function of the operation's global sequence number
// (0, 1, 2, … across all workers of a run): the same configuration and the
// same seq always give the same operation and keys, whichever worker asks and
// in whatever order. Nothing is shared between callers, so a *Workload is safe
// for concurrent use, and Keys fills a caller's buffer without allocating.
//
// Keys are 1-based row ids, matching a dataset whose primary keys are
// 1 … Rows. The kinds:
//
//	hot      key i of request seq = (seq·k + i) % Hot + 1      (reads cycle over the first Hot rows)
//	cold     key i of request seq = seq·k + i + 1              (every row exactly once; Requests() = ceil(Rows/k))
//	mixed    hot reads; operation seq is a write when seq % WriteEvery == WriteEvery−1
//	         (WriteEvery 20: operations 19, 39, 59, … are writes, 5 %); a write updates key (seq·17) % Hot + 1
//	writes   every operation is a write of key (seq·17) % Hot + 1
//	uniform  keys drawn uniformly from 1 … Rows by a PRNG seeded from (Seed, seq)
//	zipf     keys drawn from a Zipf distribution of exponent ZipfS over ranks 1 … Rows (key = rank:
//	         key 1 is the most frequent), by a PRNG seeded from (Seed, seq)
//
// A read reads k = Batch keys; a write updates one row. Mixed writes happen
// at seq ≡ WriteEvery−1 (mod WriteEvery), so with the defaults (20, 128 hot
// rows, gcd 4) they update 32 of the 128 hot rows, each equally often; writes
// alone cycle over all 128.
//
// Example:
//
//	w, err := workload.New(workload.Config{Kind: workload.Mixed, Batch: 16})
//	if err != nil {
//		return err
//	}
//	buf := make([]int64, 0, w.Batch())
//	for seq := uint64(0); seq < 40; seq++ {
//		op, keys := w.Keys(seq, buf)
//		fmt.Println(seq, op, keys)
//	}
package workload

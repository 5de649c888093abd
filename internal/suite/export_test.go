package suite

// The bounds and the pre-scan, for the tests of package suite_test.
const (
	MaxExprLen       = maxExprLen
	MaxParamValueLen = maxParamValueLen
	MaxVersionArgs   = maxVersionArgs
)

// Prescan runs the pre-scan of a suite file on its own: nil when it
// passes.
func Prescan(file string, data []byte) error {
	l := newLocated(file)
	if !prescan(l, data) {
		return l.result()
	}
	return nil
}

package configaudit

// canonicalise rewrites a patched file into the spelling the scanners
// recognise for what it means (canonical_k8s.go, canonical_tf.go), given
// the original it patches. The notes say what was rewritten; none means the
// file is returned as it was.
func canonicalise(fixtureType string, original, patched []byte) ([]byte, []string) {
	if fixtureType == FixtureTF {
		return canonicaliseTF(original, patched)
	}
	return canonicaliseK8s(original, patched)
}

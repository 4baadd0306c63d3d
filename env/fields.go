package env

// FieldExtractor is implemented by environments whose prompts are
// structured records (E1's flow records). `svbench data validate` reads
// every row's fields to look for label shortcuts: one field, or a pair,
// that predicts the gold label by itself, which a model learns instead of
// the task.
type FieldExtractor interface {
	// Fields returns the record's fields as strings ("-" or "" for a value
	// the record does not have); nil when the example is not a record.
	Fields(ex Example) map[string]string
}

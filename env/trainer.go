package env

// TrainerView is implemented by an environment whose reference graded a
// trainer's completion from a text other than the one the trainer's export
// shows. Exports of hosted training split a thinking model's output into
// reasoning_content and content after the environment scored it, so the
// recorded reward was computed on text the export no longer holds as such.
//
// TrainerView returns the completion as the environment saw it when the
// recorded reward was computed, and one sentence naming what was rebuilt (""
// when nothing was). It must not modify msgs. Environments without their own
// rule get the default of package ingest: reasoning_content put back in front
// of content (ingest.RawOutput).
//
// Only rows a trainer wrote go through this. svbench's own runs score content
// alone, as recorded.
type TrainerView interface {
	TrainerView(msgs []Message) ([]Message, string)
}

package ollama

import (
	"unicode/utf8"

	"github.com/weftlang/weft/llm/internal/wire"
)

// fastEvent decodes a streamed event without reflection into *r, which
// must be zero, the way encoding/json would: an event of text (a message
// with content, and possibly a role and thinking, both ignored) or the
// final one (done, done_reason, counts), with any other members skipped.
// The message's content is not decoded into r but returned as it stands
// in line (the body of the JSON string, with escapes if esc, valid UTF-8)
// for the caller to decode into its wire.Text. r.Model is read from the
// final event only (done), the one whose model the caller uses.
//
// ok is false, with *r in any state, for an event it does not fully
// check: one with an error or tool calls, a key encoding/json would match
// to a field case-insensitively, a duplicate key, a count that is not a
// small non-negative integer, null where a value is expected, a string
// that is not valid UTF-8, and anything malformed; the caller then
// decodes the event with encoding/json.
func fastEvent(line []byte, r *chatResponse) (content []byte, esc, ok bool) {
	s := wire.NewScanner(line)
	var top, msg uint32
	var model []byte
	var modelEsc bool
	ok = s.Object(func(key []byte) bool {
		switch string(key) {
		case "message":
			return wire.Once(&top, 1) && s.Object(func(k []byte) bool {
				switch string(k) {
				case "content":
					var ok bool
					content, esc, ok = s.RawString()
					return wire.Once(&msg, 1) && ok && utf8.Valid(content)
				case "role", "thinking":
					_, _, ok := s.RawString()
					return ok
				}
				return !wire.FoldsTo(k, "content", "tool_calls") && s.Skip()
			})
		case "done":
			if !wire.Once(&top, 2) {
				return false
			}
			switch s.Peek() {
			case 't':
				r.Done = true
				return s.Literal("true")
			case 'f':
				return s.Literal("false")
			}
			return false
		case "model":
			var ok bool
			model, modelEsc, ok = s.RawString()
			return wire.Once(&top, 4) && ok
		case "done_reason":
			var ok bool
			r.DoneReason, ok = s.Str()
			return wire.Once(&top, 8) && ok
		case "prompt_eval_count":
			var ok bool
			r.PromptEvalCount, ok = s.SmallInt()
			return wire.Once(&top, 16) && ok
		case "eval_count":
			var ok bool
			r.EvalCount, ok = s.SmallInt()
			return wire.Once(&top, 32) && ok
		}
		return !wire.FoldsTo(key, "message", "done", "error", "model", "done_reason", "prompt_eval_count", "eval_count") && s.Skip()
	}) && s.End()
	if ok && r.Done && model != nil {
		r.Model, ok = wire.Unquote(model, modelEsc)
	}
	return content, esc, ok
}

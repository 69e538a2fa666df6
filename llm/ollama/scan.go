package ollama

import "github.com/weftlang/weft/llm/internal/wire"

// fastText reads a streamed event that carries only text: a message of
// role assistant with content (and possibly thinking, ignored), done
// false, and no error or tool calls. ok is false for any other event.
func fastText(line []byte) (text string, ok bool) {
	s := wire.NewScanner(line)
	var top, msg uint32
	ok = s.Object(func(key []byte) bool {
		switch string(key) {
		case "message":
			return wire.Once(&top, 1) && s.Object(func(k []byte) bool {
				switch string(k) {
				case "content":
					var ok bool
					text, ok = s.Str()
					return wire.Once(&msg, 1) && ok
				case "role":
					return wire.Once(&msg, 2) && s.IsString("assistant")
				case "thinking":
					_, _, ok := s.RawString()
					return wire.Once(&msg, 4) && ok
				}
				return false
			})
		case "done":
			return wire.Once(&top, 2) && s.Literal("false")
		case "model":
			_, _, ok := s.RawString()
			return wire.Once(&top, 4) && ok
		}
		return !wire.FoldsTo(key, "message", "done", "error", "model", "done_reason", "prompt_eval_count", "eval_count") && s.Skip()
	}) && s.End()
	return text, ok
}

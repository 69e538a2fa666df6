package openai

import "github.com/weftlang/weft/llm/internal/wire"

// fastText reads a streamed chunk that carries only text: one choice at
// index 0 whose delta has content (and possibly a role), with no
// finish_reason, usage or error. ok is false for any other chunk.
func fastText(data []byte) (text string, ok bool) {
	s := wire.NewScanner(data)
	var top, choice, delta uint32
	ok = s.Object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			n := 0
			return wire.Once(&top, 1) && s.Array(func() bool {
				n++
				return n == 1 && s.Object(func(k []byte) bool {
					switch string(k) {
					case "delta":
						return wire.Once(&choice, 1) && s.Object(func(k []byte) bool {
							switch string(k) {
							case "content":
								var ok bool
								text, ok = s.Str()
								return wire.Once(&delta, 1) && ok
							case "role":
								return wire.Once(&delta, 2) && s.IsString("assistant")
							case "refusal":
								return wire.Once(&delta, 4) && s.Literal("null")
							}
							return false
						})
					case "index":
						return wire.Once(&choice, 2) && s.Literal("0")
					case "finish_reason":
						return wire.Once(&choice, 4) && s.Literal("null")
					case "logprobs":
						return wire.Once(&choice, 8) && s.Literal("null")
					}
					return false
				})
			}) && n == 1
		case "usage":
			return wire.Once(&top, 2) && s.Literal("null")
		case "model":
			_, _, ok := s.RawString()
			return wire.Once(&top, 4) && ok
		}
		return !wire.FoldsTo(key, "choices", "usage", "error", "model") && s.Skip()
	}) && s.End()
	return text, ok && delta&1 != 0
}

package openai

import (
	"unicode/utf8"

	"github.com/weftlang/weft/llm/internal/wire"
)

// fastText reads a streamed chunk that carries only text: one choice at
// index 0 whose delta has content (and possibly a role), with no
// finish_reason, usage or error. The content is returned as it stands in
// data (the body of the JSON string, with escapes if esc, valid UTF-8) for
// the caller to decode into its wire.Text. ok is false for any other
// chunk.
func fastText(data []byte) (text []byte, esc, ok bool) {
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
								text, esc, ok = s.RawString()
								return wire.Once(&delta, 1) && ok && utf8.Valid(text)
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
	return text, esc, ok && delta&1 != 0
}

package anthropic

import "github.com/weftlang/weft/llm/internal/wire"

// fastDelta reads a content_block_delta event of a text_delta (kind 't')
// or an input_json_delta (kind 'j'). ok is false for any other event.
func fastDelta(data []byte) (index int, kind byte, text string, ok bool) {
	s := wire.NewScanner(data)
	typed, indexed, hasText := false, false, false
	var top, delta uint32
	var field byte // 't' for text, 'j' for partial_json
	ok = s.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			typed = wire.Once(&top, 1) && s.IsString("content_block_delta")
			return typed
		case "index":
			if !wire.Once(&top, 2) {
				return false
			}
			index, indexed = s.SmallInt()
			return indexed
		case "delta":
			return wire.Once(&top, 4) && s.Object(func(k []byte) bool {
				switch string(k) {
				case "type":
					if !wire.Once(&delta, 1) {
						return false
					}
					raw, esc, ok := s.RawString()
					switch {
					case !ok || esc:
						return false
					case string(raw) == "text_delta":
						kind = 't'
					case string(raw) == "input_json_delta":
						kind = 'j'
					default:
						return false
					}
					return true
				case "text", "partial_json":
					if hasText {
						return false
					}
					field = 'j'
					if string(k) == "text" {
						field = 't'
					}
					var ok bool
					text, ok = s.Str()
					hasText = ok
					return ok
				}
				return false
			})
		}
		return false
	}) && s.End()
	ok = ok && typed && indexed && hasText &&
		kind == field
	return index, kind, text, ok
}

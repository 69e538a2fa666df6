// Package tokens counts the tokens of text and of chat messages with
// OpenAI's BPE encodings (cl100k_base, o200k_base), through
// github.com/tiktoken-go/tokenizer. The encoding tables are embedded in that
// library, so counting works offline: nothing is downloaded, ever.
//
// Other model families (Llama, Claude, Qwen) use other tokenizers; for them
// the counts are an estimate, usually within 10-20%, which is what budget
// checks such as "the SQL result exceeds 500 tokens" need.
package tokens

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"

	"github.com/weftlang/weft/llm"
)

// The encodings New accepts.
const (
	Cl100kBase = "cl100k_base" // GPT-4, GPT-3.5; the default
	O200kBase  = "o200k_base"  // GPT-4o, GPT-4.1, o-series, GPT-5
)

// DefaultEncoding is the encoding New uses for "".
const DefaultEncoding = Cl100kBase

// Per-message overhead of the chat format, as OpenAI's cookbook counts it
// ("How to count tokens with tiktoken", num_tokens_from_messages, for
// gpt-3.5-turbo-0613, gpt-4 and later): every message is wrapped in
// <|start|>{role}\n{content}<|end|>\n, a name costs one more token, and
// every reply is primed with <|start|>assistant<|message|>.
const (
	TokensPerMessage = 3
	TokensPerName    = 1
	TokensReplyPrime = 3
)

// UnknownEncodingError reports an encoding New does not know.
type UnknownEncodingError struct {
	Name string
}

// Error names the encoding and lists the known ones.
func (e *UnknownEncodingError) Error() string {
	return fmt.Sprintf("tokens: unknown encoding %q (known: %s, %s)", e.Name, Cl100kBase, O200kBase)
}

// Counter counts tokens with one encoding. It is safe for concurrent use;
// build one and share it (building compiles the encoding's split pattern).
type Counter struct {
	name  string
	codec tokenizer.Codec
}

// New returns a Counter for an encoding: "cl100k_base" (also for ""), or
// "o200k_base". An unknown name is an *UnknownEncodingError.
func New(encoding string) (*Counter, error) {
	if encoding == "" {
		encoding = DefaultEncoding
	}
	switch encoding {
	case Cl100kBase, O200kBase:
	default:
		return nil, &UnknownEncodingError{Name: encoding}
	}
	c, err := tokenizer.Get(tokenizer.Encoding(encoding))
	if err != nil {
		return nil, fmt.Errorf("tokens: %s: %w", encoding, err)
	}
	return &Counter{name: encoding, codec: c}, nil
}

// EncodingForModel returns the encoding OpenAI uses for a model name:
// o200k_base for gpt-4o, gpt-4.1, gpt-5, o1, o3, o4 and their variants,
// cl100k_base for everything else (older OpenAI models, and as the
// estimate for models of other families).
func EncodingForModel(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 { // "openai/gpt-4o" as routers spell it
		m = m[i+1:]
	}
	for _, p := range []string{"gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "chatgpt-4o", "o1", "o3", "o4", "gpt-oss"} {
		if strings.HasPrefix(m, p) {
			return O200kBase
		}
	}
	return Cl100kBase
}

// Encoding returns the name of the Counter's encoding.
func (c *Counter) Encoding() string { return c.name }

// Count returns the number of tokens in text. (Should the tokenizer ever
// fail, Count estimates one token per four bytes rather than report 0.)
func (c *Counter) Count(text string) int {
	if text == "" {
		return 0
	}
	n, err := c.codec.Count(text)
	if err != nil {
		return (len(text) + 3) / 4
	}
	return n
}

// Exceeds reports whether text has more than budget tokens. It does not
// tokenize text that is too short to exceed the budget (a token is at least
// one byte).
func (c *Counter) Exceeds(text string, budget int) bool {
	if len(text) <= budget {
		return false
	}
	return c.Count(text) > budget
}

// CountMessages returns the number of tokens a chat request's messages
// take, with the overhead OpenAI documents: TokensPerMessage per message,
// plus the tokens of its role, content and name (and TokensPerName for a
// name), plus TokensReplyPrime for the reply. Tool calls count the tokens of
// their id, name and arguments; the exact overhead of tool calls is not
// documented, so with tools the count is an estimate.
func (c *Counter) CountMessages(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += TokensPerMessage
		n += c.Count(string(m.Role))
		n += c.Count(m.Content)
		if m.Name != "" {
			n += c.Count(m.Name) + TokensPerName
		}
		if m.ToolCallID != "" {
			n += c.Count(m.ToolCallID)
		}
		for _, tc := range m.ToolCalls {
			n += c.Count(tc.ID) + c.Count(tc.Name) + c.Count(string(tc.Arguments))
		}
	}
	return n + TokensReplyPrime
}

// Truncate returns the longest prefix of text that has at most limit tokens
// and ends on a character boundary; text itself if it fits, "" if limit <= 0.
func (c *Counter) Truncate(text string, limit int) string {
	if limit <= 0 {
		return ""
	}
	if len(text) <= limit {
		return text
	}
	_, toks, err := c.codec.Encode(text)
	if err != nil || len(toks) <= limit {
		if err != nil && len(text) > 4*limit { // the Count fallback: 4 bytes a token
			return validPrefix(text[:4*limit])
		}
		return text
	}
	// Tokens are consecutive pieces of text: the first limit of them end at
	// byte off.
	off := 0
	for _, t := range toks[:limit] {
		off += len(t)
	}
	out := validPrefix(text[:off])
	// Encoding a prefix on its own can split differently near the cut;
	// drop characters until it fits.
	for out != "" && c.Count(out) > limit {
		_, size := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-size]
	}
	return out
}

// validPrefix drops a multi-byte character cut in the middle at the end of
// s (a token can hold part of a character).
func validPrefix(s string) string {
	for i := 0; i < utf8.UTFMax && s != ""; i++ {
		if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size != 1 {
			return s
		}
		s = s[:len(s)-1]
	}
	return s
}

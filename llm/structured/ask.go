package structured

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/schema"
)

// DefaultMaxRepairs is the number of times Ask re-asks the model when
// Options.MaxRepairs is 0.
const DefaultMaxRepairs = 2

// DefaultSchemaName names the schema in requests that set no SchemaName.
const DefaultSchemaName = "output"

// Options tune Ask.
type Options struct {
	// MaxRepairs bounds how many times the model is re-asked after a reply
	// that does not match the schema: 0 means DefaultMaxRepairs, a
	// negative number means never.
	MaxRepairs int
	// Fallback, when not nil, asks Ask to fall back instead of failing:
	// to these values, by output name, and to the typed zero
	// (flow.ZeroOf) of the outputs it leaves out. Each value must conform
	// to its output's type, and an Enum output, which has no typed zero,
	// must be given. An empty, non-nil map falls back to the typed zeros.
	// Nil (the default) makes Ask return an *InvalidError or a
	// *CallError instead: a failure is never silently an answer.
	Fallback map[string]flow.Value
	// OnChunk, if set, receives the streamed reply of every attempt.
	OnChunk func(llm.Chunk) error
}

// Result is the outcome of Ask.
type Result struct {
	// Values holds one value per declared output, conformed to its type:
	// from the model's reply, or the fallback defaults when FellBack.
	Values map[string]flow.Value
	// Raw is the text of the last reply (empty if no reply came).
	Raw string
	// JSON is the JSON value taken from the last reply, if one was found.
	JSON json.RawMessage
	// Extraction says where the JSON was found in the last reply: the
	// whole reply, a markdown fence, or surrounding prose.
	Extraction Extraction
	// Attempts counts the calls made to the model.
	Attempts int
	// Usage sums the token usage of every attempt.
	Usage llm.Usage
	// FellBack is true when Values are the fallback values
	// (Options.Fallback was set): say so to whoever reads them.
	FellBack bool
	// Violations are those of the last reply when it did not match.
	Violations []Violation
	// Err is the provider error that made Ask fall back, if any.
	Err error
}

// InvalidError is returned when no reply matched the schema and no
// fallback was asked for.
type InvalidError struct {
	Attempts   int
	Violations []Violation // of the last reply
	Raw        string      // the last reply
	// Truncated is set when the last reply was cut at the token limit
	// (its FinishReason was llm.FinishLength): a larger max_tokens, or a
	// shorter answer, is what it needs.
	Truncated bool
}

// Error lists the violations of the last reply, and says when it was cut.
func (e *InvalidError) Error() string {
	if e.Truncated {
		return fmt.Sprintf("structured: the reply was cut at the token limit (finish reason %q) after %d attempt(s), each too long: raise max_tokens or ask for less: %s",
			llm.FinishLength, e.Attempts, joinViolations(e.Violations, "; "))
	}
	return fmt.Sprintf("structured: the reply did not match the schema after %d attempt(s): %s",
		e.Attempts, joinViolations(e.Violations, "; "))
}

// CallError is a failed call to the model: Ask's error when no fallback
// was asked for, and kept in Result.Err when one was.
type CallError struct {
	Attempt int // 1 for the first call
	Err     error
}

// Error names the attempt and the cause.
func (e *CallError) Error() string {
	return fmt.Sprintf("structured: attempt %d: %v", e.Attempt, e.Err)
}

// Unwrap returns the cause (often an *llm.Error).
func (e *CallError) Unwrap() error { return e.Err }

// ConfigError reports a call to Ask that can never succeed: no model, no
// request, outputs without a schema, or a fallback that does not fit its
// output. It is returned whatever the Options say.
type ConfigError struct {
	Err error
}

// Error describes the problem.
func (e *ConfigError) Error() string { return "structured: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *ConfigError) Unwrap() error { return e.Err }

// Ask asks m for a reply holding the declared outputs. It sets the request's
// Schema to the schema of fields (schema.FromFields; req itself is not
// changed), calls the model and validates the reply. When the reply does not
// match, the model is re-asked, with its reply and a message listing every
// violation appended to the conversation, up to Options.MaxRepairs times.
//
// A reply cut at the token limit (FinishReason llm.FinishLength) that does
// not match is re-asked too, telling the model it was cut and to answer
// shorter.
//
// When no reply matches Ask returns an *InvalidError, and when the
// provider fails (an *llm.Error: a network error, a 4xx, a 5xx after the
// provider's retries) a *CallError carrying the provider's message. Only
// when the caller asked for it, with Options.Fallback, does Ask fall back
// instead: it returns the fallback values with Result.FellBack set, the
// violations in Result.Violations and the model's error in Result.Err,
// and a nil error; the caller must make that visible.
//
// Ask always returns an error when ctx is done (the run is being stopped),
// when Options.OnChunk stops the stream, for a *ConfigError, and as a
// *CallError for a model error that is not an *llm.Error (a replayed run
// asking for an exchange that was never recorded, say).
func Ask(ctx context.Context, m llm.Model, req *llm.Request, fields []*flow.Field, opts Options) (*Result, error) {
	a, err := NewAsker(fields, opts)
	if err != nil {
		return nil, err
	}
	return a.Ask(ctx, m, req, opts.OnChunk)
}

// Asker asks for one list of declared outputs, as Ask does, with their JSON
// Schema derived and compiled, and their fallback values made, once: a
// node that asks again and again makes an Asker once. An Asker is
// immutable and safe for concurrent use.
type Asker struct {
	fields   []*flow.Field
	raw      json.RawMessage
	v        *Validator
	fallback map[string]flow.Value
	opts     Options
}

// NewAsker makes the Asker of fields with opts (its OnChunk is not kept:
// pass one to each Ask). Its error is a *ConfigError.
func NewAsker(fields []*flow.Field, opts Options) (*Asker, error) {
	raw, err := schema.FromFields(fields)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	fallback, err := fallbacks(fields, opts.Fallback)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	v, err := Compile(raw)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	opts.OnChunk = nil
	return &Asker{fields: slices.Clone(fields), raw: raw, v: v, fallback: fallback, opts: opts}, nil
}

// Schema returns the JSON Schema the Asker asks for.
func (a *Asker) Schema() json.RawMessage { return slices.Clone(a.raw) }

// Ask asks m, as the package's Ask does; onChunk, if set, receives the
// streamed reply of every attempt.
func (a *Asker) Ask(ctx context.Context, m llm.Model, req *llm.Request, onChunk func(llm.Chunk) error) (*Result, error) {
	if m == nil {
		return nil, &ConfigError{Err: errors.New("no model")}
	}
	if req == nil {
		return nil, &ConfigError{Err: errors.New("no request")}
	}
	opts, raw, v, fields, fallback := a.opts, a.raw, a.v, a.fields, a.fallback
	opts.OnChunk = onChunk
	repairs := opts.MaxRepairs
	switch {
	case repairs == 0:
		repairs = DefaultMaxRepairs
	case repairs < 0:
		repairs = 0
	}

	r := *req
	r.Schema = raw
	if r.SchemaName == "" {
		r.SchemaName = DefaultSchemaName
	}
	r.Messages = slices.Clone(req.Messages)

	res := &Result{}
	truncated := false // the last reply was cut at the token limit
	var chunkErr error
	onChunk = opts.OnChunk
	if onChunk != nil {
		onChunk = func(c llm.Chunk) error {
			if err := opts.OnChunk(c); err != nil {
				chunkErr = err
				return err
			}
			return nil
		}
	}
	for attempt := 1; attempt <= repairs+1; attempt++ {
		res.Attempts = attempt
		resp, err := m.Chat(ctx, &r, onChunk)
		if resp != nil {
			res.Usage.InputTokens += resp.Usage.InputTokens
			res.Usage.OutputTokens += resp.Usage.OutputTokens
		}
		if err != nil {
			if chunkErr != nil && errors.Is(err, chunkErr) {
				return nil, chunkErr
			}
			if cerr := ctx.Err(); cerr != nil {
				return nil, &CallError{Attempt: attempt, Err: cerr}
			}
			ce := &CallError{Attempt: attempt, Err: err}
			// Fall back only from what a provider did (an *llm.Error:
			// a refused, failed or dropped call). Anything else, such as
			// a replayed run that asks something never recorded, is a
			// mistake to report, not a reply to paper over.
			var pe *llm.Error
			if fallback == nil || !errors.As(err, &pe) {
				return nil, ce
			}
			res.Err = ce
			return fellBack(res, fallback), nil
		}
		if resp == nil {
			resp = &llm.Response{}
		}
		text := replyText(resp)
		rep := v.Validate(text)
		res.Raw, res.JSON, res.Extraction, res.Violations = text, rep.JSON, rep.Extraction, rep.Violations
		cut := resp.FinishReason == llm.FinishLength
		if rep.Valid() {
			vals, err := schema.Decode(rep.JSON, fields)
			if err == nil {
				res.Values = vals
				res.Violations = nil
				return res, nil
			}
			// Valid JSON Schema, but not a valid weft value (an integer that
			// overflows Int, a duration that overflows Duration).
			res.Violations = []Violation{decodeViolation(err)}
		}
		truncated = cut
		if attempt <= repairs {
			prompt := RepairPrompt(res.Violations)
			if cut {
				prompt = CutRepairPrompt
			}
			r.Messages = append(r.Messages,
				llm.Message{Role: llm.Assistant, Content: ClipQuote(text)},
				llm.Message{Role: llm.User, Content: prompt})
		}
	}
	if fallback == nil {
		return nil, &InvalidError{Attempts: res.Attempts, Violations: res.Violations, Raw: res.Raw, Truncated: truncated}
	}
	return fellBack(res, fallback), nil
}

// RepairQuoteBytes is how much of a bad reply a repair quotes back to the
// model: its first and its last RepairQuoteBytes bytes, with a line
// between them saying how many bytes were cut. A reply of at most twice
// as much is quoted whole. Each violation listed is clipped likewise.
const RepairQuoteBytes = 2 << 10

// ClipQuote returns s whole if it is at most 2*RepairQuoteBytes long, and
// otherwise its first and last RepairQuoteBytes bytes (cut at rune
// boundaries) joined by a line "[... N bytes cut ...]": what a repair
// quotes of a bad reply, so that a huge reply is not sent back whole on
// every attempt.
func ClipQuote(s string) string {
	return clipMiddle(s, RepairQuoteBytes)
}

// clipMiddle keeps the first and last keep bytes of s, at rune
// boundaries, and says how many bytes it cut between them.
func clipMiddle(s string, keep int) string {
	if len(s) <= 2*keep {
		return s
	}
	head, tail := keep, len(s)-keep
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + fmt.Sprintf("\n[... %d bytes cut ...]\n", tail-head) + s[tail:]
}

// violationQuoteBytes bounds each half of a violation quoted in a repair.
const violationQuoteBytes = 500

// CutRepairPrompt is the user message that re-asks the model after a reply
// cut at the token limit (FinishReason llm.FinishLength) that did not
// match the schema.
const CutRepairPrompt = "Your reply was cut at the token limit before it ended. Reply again, shorter, with only the JSON."

// RepairPrompt is the user message that re-asks the model after a reply
// that did not match the schema: every violation on its own line, each
// clipped in its middle if longer than 1000 bytes.
func RepairPrompt(vs []Violation) string {
	var b strings.Builder
	b.WriteString("Your reply did not match the schema:\n")
	for _, v := range vs {
		b.WriteString("- ")
		b.WriteString(clipMiddle(v.String(), violationQuoteBytes))
		b.WriteByte('\n')
	}
	b.WriteString("Reply again with only the JSON.")
	return b.String()
}

// replyText returns the text of a reply. A reply that has no text but one
// tool call (a provider that carries structured output as a tool call)
// gives the call's arguments.
func replyText(resp *llm.Response) string {
	if resp.Message.Content == "" && len(resp.Message.ToolCalls) == 1 {
		return string(resp.Message.ToolCalls[0].Arguments)
	}
	return resp.Message.Content
}

// decodeViolation turns a schema.Decode error into a violation at the
// output's path.
func decodeViolation(err error) Violation {
	var se *schema.Error
	if errors.As(err, &se) && se.Field != "" {
		return Violation{Path: "/" + escape(se.Field), Message: se.Err.Error()}
	}
	return Violation{Message: err.Error()}
}

// fallbacks returns the fallback value of every output: Options.Fallback
// where given (conformed to the output's type), else the type's zero; nil
// when no fallback was asked for.
func fallbacks(fields []*flow.Field, given map[string]flow.Value) (map[string]flow.Value, error) {
	if given == nil {
		return nil, nil
	}
	out := make(map[string]flow.Value, len(fields))
	for _, f := range fields {
		if _, ok := given[f.Name]; ok {
			continue
		}
		z, ok := flow.ZeroOf(f.Type)
		if !ok {
			return nil, fmt.Errorf("the fallback gives no value for %s, an %s, which has no typed zero: give one", f.Name, f.Type)
		}
		out[f.Name] = z
	}
	for name, v := range given {
		i := slices.IndexFunc(fields, func(f *flow.Field) bool { return f.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("fallback for %q, which is not a declared output", name)
		}
		c, err := flow.Conform(v, fields[i].Type)
		if err != nil {
			return nil, fmt.Errorf("fallback for %s: %w", name, err)
		}
		out[name] = c
	}
	return out, nil
}

// fellBack marks res as fallen back to the fallback values.
func fellBack(res *Result, fallback map[string]flow.Value) *Result {
	res.Values = fallback
	res.FellBack = true
	return res
}

// joinViolations writes the violations joined by sep.
func joinViolations(vs []Violation, sep string) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return strings.Join(s, sep)
}

package owf

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/owf/internal/canon"
)

// Entry is a value in memory: a plain string, or a JSON value kept as
// serde_json prints it (compact, object keys sorted). Both render as Text.
type Entry struct {
	Text string
	JSON bool
}

// plainEntry is a string stored as it is.
func plainEntry(s string) Entry { return Entry{Text: s} }

// jsonEntry is JSON source text stored as a JSON value.
func jsonEntry(raw string) Entry {
	if c, ok := canon.Canonical(raw); ok {
		return Entry{Text: c, JSON: true}
	}
	return Entry{Text: raw}
}

// TryJSON is the reference's "try JSON, else string": text that is one
// JSON document becomes a JSON value (and renders canonicalized), anything
// else stays a plain string.
func TryJSON(text string) Entry {
	if c, ok := canon.Canonical(text); ok {
		return Entry{Text: c, JSON: true}
	}
	return Entry{Text: text}
}

// Value is the entry as workflow state: a String for a plain string, an
// Object {"json": text} for a JSON value.
func (e Entry) Value() flow.Value {
	if !e.JSON {
		return flow.StringValue(e.Text)
	}
	return flow.ObjectValue(map[string]flow.Value{"json": flow.StringValue(e.Text)})
}

// entryOf reads an entry back from workflow state.
func entryOf(v flow.Value) (Entry, bool) {
	switch v.Kind() {
	case flow.KindString:
		return Entry{Text: v.Str()}, true
	case flow.KindObject:
		if j := v.Object()["json"]; j.Kind() == flow.KindString && v.Len() == 1 {
			return Entry{Text: j.Str(), JSON: true}, true
		}
	}
	return Entry{}, false
}

// readKind is the shape of a memory read.
type readKind uint8

const (
	single   readKind = iota // one entry, maybe absent
	list                     // a stack's entries, maybe absent
	multiple                 // several reads (return_value arrays)
)

// result is the outcome of a memory read (the reference's MemoryReturnType).
type result struct {
	kind    readKind
	present bool
	entry   Entry
	entries []Entry
	reads   []result
}

func absentSingle() result          { return result{kind: single} }
func singleOf(e Entry) result       { return result{kind: single, present: true, entry: e} }
func listOf(es []Entry) result      { return result{kind: list, present: true, entries: es} }
func multipleOf(rs []result) result { return result{kind: multiple, present: len(rs) > 0, reads: rs} }
func (r result) absent() bool       { return !r.present }
func (r result) nonEmptyList() bool { return r.kind == list && r.present && len(r.entries) > 0 }
func (r result) appendTo(b []byte) []byte {
	switch r.kind {
	case single:
		if r.present {
			b = append(b, r.entry.Text...)
		}
	case list:
		for _, e := range r.entries {
			b = append(b, e.Text...)
			b = append(b, " \n"...)
		}
	case multiple:
		for _, x := range r.reads {
			b = x.appendTo(b)
			b = append(b, " \n"...)
		}
	}
	return b
}

// render is the reference's Display: absent is "", a list is each entry
// followed by " \n", a multiple each read followed by " \n".
func (r result) render() string {
	if r.kind == single {
		if r.present {
			return r.entry.Text
		}
		return ""
	}
	return string(r.appendTo(nil))
}

// jsonForm is the JSON the reference returns for to_json: a present list
// is an array of its rendered entries, a multiple an array of each read's
// rendering. Single reads and absent lists have none.
func (r result) jsonForm() (string, bool) {
	var parts []string
	switch {
	case r.kind == list && r.present:
		for _, e := range r.entries {
			parts = append(parts, e.Text)
		}
	case r.kind == multiple:
		for _, x := range r.reads {
			parts = append(parts, x.render())
		}
	default:
		return "", false
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(canon.Quote(p))
	}
	b.WriteByte(']')
	return b.String(), true
}

// chunk is one piece of text in the file system and its embedding.
type chunk struct {
	text   string
	vector []float32
}

func (c chunk) value() flow.Value {
	vs := make([]flow.Value, len(c.vector))
	for i, f := range c.vector {
		vs[i] = flow.FloatValue(float64(f))
	}
	return flow.ObjectValue(map[string]flow.Value{"text": flow.StringValue(c.text), "vector": flow.ListValue(vs...)})
}

func chunkOf(v flow.Value) (chunk, bool) {
	if v.Kind() != flow.KindObject {
		return chunk{}, false
	}
	o := v.Object()
	t, vec := o["text"], o["vector"]
	if t.Kind() != flow.KindString || vec.Kind() != flow.KindList {
		return chunk{}, false
	}
	c := chunk{text: t.Str(), vector: make([]float32, vec.Len())}
	for i, x := range vec.List() {
		c.vector[i] = float32(x.Float())
	}
	return c, true
}

// memory is a task's view of the workflow's memory: the state it was given
// and the writes it made, which become its outputs.
type memory struct {
	cache      map[string]flow.Value // state: key -> entry value
	stacks     map[string]flow.Value // state: key -> list of entry values
	files      []flow.Value          // state: chunks
	cacheW     map[string]Entry
	stacksW    map[string][]Entry // the whole new content of each stack written
	newFiles   []chunk
	filesCache []chunk // decoded files, on first search
}

func newMemory(cache, stacks, files flow.Value) *memory {
	return &memory{cache: cache.Object(), stacks: stacks.Object(), files: files.List()}
}

func (m *memory) read(key string) (Entry, bool) {
	if e, ok := m.cacheW[key]; ok {
		return e, true
	}
	v, ok := m.cache[key]
	if !ok {
		return Entry{}, false
	}
	return entryOf(v)
}

func (m *memory) write(key string, e Entry) {
	if m.cacheW == nil {
		m.cacheW = map[string]Entry{}
	}
	m.cacheW[key] = e
}

// stack returns the stack called key and whether it exists.
func (m *memory) stack(key string) ([]Entry, bool) {
	if s, ok := m.stacksW[key]; ok {
		return s, true
	}
	v, ok := m.stacks[key]
	if !ok {
		return nil, false
	}
	out := make([]Entry, 0, v.Len())
	for _, x := range v.List() {
		if e, ok := entryOf(x); ok {
			out = append(out, e)
		}
	}
	return out, true
}

func (m *memory) setStack(key string, s []Entry) {
	if m.stacksW == nil {
		m.stacksW = map[string][]Entry{}
	}
	m.stacksW[key] = s
}

func (m *memory) push(key string, e Entry) {
	s, _ := m.stack(key)
	m.setStack(key, append(slices.Clip(s), e))
}

func (m *memory) pop(key string) (Entry, bool) {
	s, ok := m.stack(key)
	if !ok || len(s) == 0 {
		return Entry{}, false
	}
	e := s[len(s)-1]
	m.setStack(key, slices.Clip(s[:len(s)-1]))
	return e, true
}

func (m *memory) chunks() []chunk {
	if m.filesCache == nil {
		m.filesCache = make([]chunk, 0, len(m.files)+len(m.newFiles))
		for _, v := range m.files {
			if c, ok := chunkOf(v); ok {
				m.filesCache = append(m.filesCache, c)
			}
		}
	}
	return append(slices.Clip(m.filesCache), m.newFiles...)
}

// writes returns the task's memory writes as state values.
func (m *memory) writes() (cache, stacks, files flow.Value) {
	cw := make(map[string]flow.Value, len(m.cacheW))
	for k, e := range m.cacheW {
		cw[k] = e.Value()
	}
	sw := make(map[string]flow.Value, len(m.stacksW))
	for k, s := range m.stacksW {
		vs := make([]flow.Value, len(s))
		for i, e := range s {
			vs[i] = e.Value()
		}
		sw[k] = flow.ListValue(vs...)
	}
	fs := make([]flow.Value, len(m.newFiles))
	for i, c := range m.newFiles {
		fs[i] = c.value()
	}
	return flow.ObjectValue(cw), flow.ObjectValue(sw), flow.ListValue(fs...)
}

// resolve carries out one input op, with its side effects (pop).
func (x *executor) resolve(ctx context.Context, v InputValue) (result, error) {
	m := x.mem
	switch v.Type {
	case "input":
		if e, ok := m.read(inputKey); ok {
			return singleOf(e), nil
		}
		return absentSingle(), nil
	case "read":
		if e, ok := m.read(v.Key); ok {
			return singleOf(e), nil
		}
		return absentSingle(), nil
	case "pop":
		if e, ok := m.pop(v.Key); ok {
			return singleOf(e), nil
		}
		return absentSingle(), nil
	case "peek":
		s, _ := m.stack(v.Key)
		var i uint64
		if v.Index != nil {
			i = *v.Index
		}
		if i < uint64(len(s)) {
			return singleOf(s[i]), nil
		}
		return absentSingle(), nil
	case "get_all":
		if s, ok := m.stack(v.Key); ok {
			return listOf(s), nil
		}
		return result{kind: list}, nil
	case "size":
		s, _ := m.stack(v.Key)
		return singleOf(TryJSON(strconv.Itoa(len(s)))), nil
	case "string":
		return singleOf(TryJSON(v.Key)), nil
	case "search":
		hits, err := x.searchFilesCtx(ctx, v.Key)
		if err != nil {
			return result{}, &TaskError{Kind: "VectorSearchFailed", Msg: err.Error()}
		}
		return listOf(hits), nil
	}
	return result{}, &TaskError{Kind: "InvalidInput", Msg: "unknown input type " + strconv.Quote(v.Type)}
}

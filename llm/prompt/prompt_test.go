package prompt_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm/prompt"
)

func obj(kv ...any) flow.Value {
	m := map[string]flow.Value{}
	for i := 0; i < len(kv); i += 2 {
		v, err := flow.FromGo(kv[i+1])
		if err != nil {
			panic(err)
		}
		m[kv[i].(string)] = v
	}
	return flow.ObjectValue(m)
}

func parse(t *testing.T, text string) *prompt.Template {
	t.Helper()
	tp, err := prompt.Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return tp
}

func TestRender(t *testing.T) {
	values := map[string]flow.Value{
		"question": flow.StringValue("What was EMEA revenue in 2019?"),
		"retrieve": obj("chunks", []string{"a", "b"}, "score", 0.5, "n", 2),
		"limit":    flow.IntValue(3),
		"ratio":    flow.FloatValue(2),
		"ok":       flow.BoolValue(true),
		"wait":     flow.DurationValue(90 * time.Second),
		"nothing":  flow.Null,
		"a.b":      flow.StringValue("dotted key"),
	}
	for _, tc := range []struct{ tmpl, want string }{
		{"Q: {{question}}", "Q: What was EMEA revenue in 2019?"},
		{"{{ question }}!", "What was EMEA revenue in 2019?!"},
		{"{{retrieve.chunks}}", `["a","b"]`},
		{"{{retrieve.score}} {{retrieve.n}}", "0.5 2"},
		{"{{retrieve}}", `{"chunks":["a","b"],"n":2,"score":0.5}`},
		{"{{limit}} {{ratio}} {{ok}} {{wait}} [{{nothing}}]", "3 2.0 true 1m30s []"},
		{"{{a.b}}", "dotted key"},
		{"{{json retrieve}}", "{\n  \"chunks\": [\n    \"a\",\n    \"b\"\n  ],\n  \"n\": 2,\n  \"score\": 0.5\n}"},
		{"{{json question}}", `"What was EMEA revenue in 2019?"`},
		{"{{json nothing}}", "null"},
		{`literal {{"{{"}}x}}`, "literal {{x}}"},
		{`{"a": {"b": 1}} stays`, `{"a": {"b": 1}} stays`},
		{"no placeholders", "no placeholders"},
		{"", ""},
	} {
		got, err := parse(t, tc.tmpl).Render(values)
		if err != nil {
			t.Errorf("%q: %v", tc.tmpl, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%q:\ngot  %q\nwant %q", tc.tmpl, got, tc.want)
		}
	}
}

func TestNames(t *testing.T) {
	tp := parse(t, "Question: {{question}}\nContext: {{json retrieve.chunks}}\n{{history}}\n{{question}} {{history msgs 2}}")
	want := []string{"question", "retrieve.chunks", "history", "msgs"}
	if got := tp.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	ps := tp.Placeholders()
	if len(ps) != 5 {
		t.Fatalf("%d placeholders", len(ps))
	}
	if p := ps[1]; p.Func != prompt.FuncJSON || p.Line != 2 || p.Col != 10 {
		t.Errorf("placeholder 2: %+v", p)
	}
	if p := ps[4]; p.Func != prompt.FuncHistory || p.Name != "msgs" || p.Turns != 2 || p.Line != 4 || p.Col != 14 {
		t.Errorf("placeholder 5: %+v", p)
	}
	if p := ps[2]; p.Turns != prompt.DefaultHistoryTurns {
		t.Errorf("default turns: %+v", p)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ tmpl, want string }{
		{"Hello {{name", "prompt: 1:7: unclosed {{: want }}"},
		{"line one\n  {{}}", "prompt: 2:3: empty placeholder {{}}: want a name"},
		{"a\nb {{  }}", "prompt: 2:3: empty placeholder"},
		{"x {{1abc}}", `prompt: 1:5: bad name "1abc": want letters, digits and _, not starting with a digit`},
		{"x {{node..field}}", `prompt: 1:5: bad name "node..field": empty segment`},
		{"ok\nok {{ upper name }}", `prompt: 2:7: unknown function "upper": want json or history, or a single name`},
		{"{{json}}", "prompt: 1:3: json needs a name: {{json name}}"},
		{"{{json a b}}", `prompt: 1:10: unexpected "b": json takes one name`},
		{"{{history 3 x}}", `prompt: 1:13: unexpected "x"`},
		{"{{history h x}}", `prompt: 1:13: history: want a number of turns, got "x"`},
		{`{{"abc}}`, "prompt: 1:3: unterminated string"},
		{"{{na-me}}", `prompt: 1:3: bad name "na-me"`},
		{"{{a\n}}", "prompt: 1:1: unclosed {{"},
		{"é {{ ? }}", `prompt: 1:6: bad name "?"`},
	} {
		_, err := prompt.Parse(tc.tmpl)
		var se *prompt.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: got %v, want a *SyntaxError", tc.tmpl, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\ngot  %s\nwant %s", tc.tmpl, err, tc.want)
		}
	}
}

func TestRenderMissing(t *testing.T) {
	tp := parse(t, "{{question}}\n{{node.answer}} {{history}} {{node.answer}}")
	_, err := tp.Render(map[string]flow.Value{"node": obj("other", 1)})
	var me *prompt.MissingError
	if !errors.As(err, &me) {
		t.Fatalf("got %v", err)
	}
	if want := []string{"question", "node.answer", "history"}; !slices.Equal(me.Names, want) || me.Line != 1 || me.Col != 1 {
		t.Errorf("missing %+v", me)
	}
	if want := `prompt: 1:1: no values for "question", "node.answer", "history"`; err.Error() != want {
		t.Errorf("message %q", err)
	}
}

func TestRenderErrors(t *testing.T) {
	for _, tc := range []struct {
		tmpl   string
		values map[string]flow.Value
		want   string
	}{
		{"{{a.b}}", map[string]flow.Value{"a": flow.StringValue("x")}, "prompt: 1:1: a.b: a is a String, not an Object"},
		{"{{history}}", map[string]flow.Value{"history": flow.IntValue(1)}, "history must be a List of turns, got Int"},
		{"{{history}}", map[string]flow.Value{"history": flow.ListValue(flow.IntValue(1))}, "history[0]: want an Object or a String, got Int"},
		{"{{history}}", map[string]flow.Value{"history": flow.ListValue(obj("x", 1))}, `history[0]: a turn needs "question" or "response"`},
		{"{{x}}", map[string]flow.Value{"x": flow.ListValue(flow.FloatValue(nan()))}, "has no JSON form"},
	} {
		_, err := parse(t, tc.tmpl).Render(tc.values)
		var re *prompt.RenderError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want a *RenderError containing %q", tc.tmpl, err, tc.want)
		}
	}
}

func nan() float64 { z := 0.0; return z / z }

// turns builds seed 003's TurnSummary history.
func turns(n int) flow.Value {
	var vs []flow.Value
	for i := 1; i <= n; i++ {
		t := map[string]any{"question": "q" + string(rune('0'+i)), "response": "r" + string(rune('0'+i))}
		if i == n {
			t["key_artifacts"] = []any{
				map[string]any{"type": "es_query", "intent": "shipments from Maersk"},
				map[string]any{"type": "note"},
			}
		}
		v, _ := flow.FromGo(t)
		vs = append(vs, v)
	}
	return flow.ListValue(vs...)
}

func TestHistory(t *testing.T) {
	values := map[string]flow.Value{"history": turns(7)}
	got, err := parse(t, "{{history}}").Render(values)
	if err != nil {
		t.Fatal(err)
	}
	want := "Human: q3\nAI: r3\nHuman: q4\nAI: r4\nHuman: q5\nAI: r5\nHuman: q6\nAI: r6\nHuman: q7\nAI: r7\n[Prior queries: shipments from Maersk]"
	if got != want {
		t.Errorf("last 5 turns:\n%s\nwant:\n%s", got, want)
	}
	got, _ = parse(t, "{{history 1}}").Render(values)
	if got != "Human: q7\nAI: r7\n[Prior queries: shipments from Maersk]" {
		t.Errorf("last turn: %q", got)
	}
	got, _ = parse(t, "{{history 0}}").Render(values)
	if strings.Count(got, "Human:") != 7 {
		t.Errorf("all turns: %q", got)
	}

	// Chat messages: a turn starts at each user message.
	msgs, _ := flow.FromGo([]any{
		map[string]any{"role": "system", "content": "be brief"},
		map[string]any{"role": "user", "content": "hi"},
		map[string]any{"role": "assistant", "content": "hello"},
		map[string]any{"role": "user", "content": "revenue?"},
		map[string]any{"role": "assistant", "content": "60.3B"},
		map[string]any{"role": "user", "content": "and 2018?"},
	})
	got, err = parse(t, "{{history conversation 2}}").Render(map[string]flow.Value{"conversation": msgs})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Human: revenue?\nAI: 60.3B\nHuman: and 2018?"; got != want {
		t.Errorf("messages:\n%s\nwant:\n%s", got, want)
	}
	// Strings and null.
	got, _ = parse(t, "[{{history}}]").Render(map[string]flow.Value{"history": flow.StringList("Human: a", "AI: b")})
	if got != "[Human: a\nAI: b]" {
		t.Errorf("strings: %q", got)
	}
	got, _ = parse(t, "[{{history}}]").Render(map[string]flow.Value{"history": flow.Null})
	if got != "[]" {
		t.Errorf("null history: %q", got)
	}
}

func TestConcurrentRender(t *testing.T) {
	tp := parse(t, "{{q}} {{json o}} {{history}}")
	values := map[string]flow.Value{"q": flow.StringValue("x"), "o": obj("k", 1), "history": turns(3)}
	want, err := tp.Render(values)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, err := tp.Render(values); err != nil || got != want {
				t.Errorf("%q %v", got, err)
			}
		}()
	}
	wg.Wait()
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"{{a}}", "{{json a.b}}", "{{history x 3}}", `{{"{{"}}`, "{{", "}}{{ }}", "é{{é}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tp, err := prompt.Parse(s)
		if err != nil {
			var se *prompt.SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Col < 1 {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		values := map[string]flow.Value{}
		for _, n := range tp.Names() {
			values[n] = flow.StringValue("v")
		}
		if _, err := tp.Render(values); err != nil {
			var re *prompt.RenderError
			if !errors.As(err, &re) {
				t.Fatalf("%q: %v", s, err)
			}
		}
	})
}

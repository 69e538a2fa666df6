package owf

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/owf/tools"
	memstore "github.com/weftlang/weft/store/memory"
)

func writeK(msg string) string {
	return `{"config":{"max_steps":10,"max_time":10},"external_memory":{"ext":"{\"b\": 1}"},"tasks":[` +
		task("A", "sample", []string{msg}, "", `[{"type":"write","key":"k","value":"__result"},{"type":"write","key":"k2","value":"{\"z\":0, \"y\":1}"}]`) +
		`],"steps":[{"source":"A","target":"__end"}],"return_value":{"input":[{"type":"read","key":"k"},{"type":"read","key":"k2"},{"type":"read","key":"ext"}]}}`
}

func TestScenario11ValueCanonicalization(t *testing.T) {
	for _, c := range []struct{ msg, want string }{
		{`{"b": 1,  "a": [1, 2.50]}`, `{"a":[1,2.5],"b":1}`},
		{"  42\n", "42"},
		{`"yes"`, `"yes"`},
		{"yes", "yes"},
		{"1e1", "10.0"},
		{"007", "007"},
	} {
		out, _ := mustRun(t, writeK(c.msg), Options{})
		want := c.want + " \n" + `{"y":1,"z":0}` + " \n" + `{"b": 1}` + " \n"
		if out != want {
			t.Errorf("message %q: result = %q, want %q", c.msg, out, want)
		}
	}
}

func TestScenario13ToJSONAndPostProcess(t *testing.T) {
	base := `{"config":{"max_steps":10,"max_time":10},"external_memory":{"s":["a","b"],"g":"Hello World"},"tasks":[],"steps":[],"return_value":`
	out, _ := mustRun(t, base+`{"input":{"type":"get_all","key":"s"},"to_json":true,"post_process":[{"process_type":"to_upper"}]}}`, Options{})
	if out != `["a","b"]` {
		t.Errorf("get_all to_json = %q, want [\"a\",\"b\"] with post-processing skipped", out)
	}
	out, _ = mustRun(t, base+`{"input":{"type":"read","key":"g"},"to_json":true,"post_process":[
		{"process_type":"replace","lhs":"o","rhs":"0"},{"process_type":"replace","lhs":"l"},{"process_type":"to_upper"},
		{"process_type":"prepend","lhs":">> "},{"process_type":"append","rhs":" <<"}]}}`, Options{})
	if out != ">> HELL0 W0RLD <<" {
		t.Errorf("read with post-processing = %q, want %q", out, ">> HELL0 W0RLD <<")
	}
	out, _ = mustRun(t, base+`{"input":{"type":"get_all","key":"missing"},"to_json":true}}`, Options{})
	if out != "" {
		t.Errorf("get_all of a missing stack with to_json = %q, want empty", out)
	}
	out, _ = mustRun(t, base+`{"input":{"type":"read","key":"g"},"post_process":[{"process_type":"replace","lhs":"","rhs":"x"},{"process_type":"trim"}]}}`, Options{})
	if out != "xHxexlxlxox xWxoxrxlxdx" {
		t.Errorf("replace with an empty lhs = %q", out)
	}
	out, _ = mustRun(t, base+`{"input":[{"type":"get_all","key":"s"},{"type":"read","key":"g"}],"to_json":true}}`, Options{})
	if out != `["a \nb \n","Hello World"]` {
		t.Errorf("multiple to_json = %q", out)
	}
}

func TestScenario14FirstStepPerSourceWins(t *testing.T) {
	src := `{"config":{"max_steps":10,"max_time":10},"tasks":[` +
		task("A", "sample", []string{"a"}, "", "") + "," +
		task("B", "sample", []string{"b"}, "", `[{"type":"write","key":"r","value":"__result"}]`) + "," +
		task("C", "sample", []string{"c"}, "", `[{"type":"write","key":"r","value":"__result"}]`) +
		`],"steps":[{"source":"A","target":"B"},{"source":"A","target":"C"},{"source":"B","target":"__end"},{"source":"C","target":"__end"}],"return_value":{"input":{"type":"read","key":"r"}}}`
	out, res := mustRun(t, src, Options{})
	if out != "b" || strings.Contains(path(res), "C") {
		t.Errorf("result = %q, path %s; want b and C never run", out, path(res))
	}
}

func TestScenario15UnknownTask(t *testing.T) {
	_, _, err := run(t, `{"config":{"max_steps":10,"max_time":10},"tasks":[],"steps":[{"source":"X","target":"__end"}],"return_value":{"input":{"type":"read","key":"r"}}}`, nil, Options{})
	wantWorkflowError(t, err, "Task with id [X] not found")
	// Also when an edge leads to it after a task ran.
	src := `{"config":{"max_steps":10,"max_time":10},"tasks":[` + task("A", "sample", []string{"a"}, "", "") +
		`],"steps":[{"source":"A","target":"Y"},{"source":"Y","target":"__end"}],"return_value":{"input":{"type":"read","key":"r"}}}`
	_, _, err = run(t, src, nil, Options{})
	wantWorkflowError(t, err, "Task with id [Y] not found")
}

func TestScenario16SampleErrors(t *testing.T) {
	mk := func(input string) string {
		return `{"config":{"max_steps":10,"max_time":10},"external_memory":{"s":["a"],"names":["nothing"]},"tasks":[` +
			task("A", "sample", []string{"x"}, `[{"name":"v","value":`+input+`,"required":false}]`, "") +
			`],"steps":[{"source":"A","target":"__end"}],"return_value":{"input":{"type":"read","key":"r"}}}`
	}
	_, _, err := run(t, mk(`{"type":"get_all","key":"s"}`), nil, Options{})
	wantWorkflowError(t, err, "InvalidGetAllError")
	_, _, err = run(t, mk(`{"type":"pop","key":"names"}`), nil, Options{})
	wantWorkflowError(t, err, "SamplingError")
	// A stack that exists but is empty: the reference panics.
	src := `{"config":{"max_steps":10,"max_time":10},"external_memory":{"s":["a"],"names":["s"]},"tasks":[` +
		task("A", "sample", []string{"x"}, `[{"name":"d","value":{"type":"pop","key":"s"},"required":true},{"name":"v","value":{"type":"pop","key":"names"},"required":true}]`, "") +
		`],"steps":[{"source":"A","target":"__end"}],"return_value":{"input":{"type":"read","key":"r"}}}`
	_, _, err = run(t, src, nil, Options{})
	wantWorkflowError(t, err, "SamplingError")
}

func TestScenario17SearchWithoutQuery(t *testing.T) {
	mk := func(msg, fallback string) string {
		return `{"config":{"max_steps":10,"max_time":10},"tasks":[` +
			task("A", "search", []string{msg}, "", `[{"type":"write","key":"r","value":"__result"}]`) + "," +
			task("Z", "sample", []string{"recovered"}, "", `[{"type":"write","key":"r","value":"__result"}]`) +
			`],"steps":[{"source":"A","target":"__end"` + fallback + `},{"source":"Z","target":"__end"}],"return_value":{"input":{"type":"read","key":"r"}}}`
	}
	for _, msg := range []string{"not json", `{"query": 5}`, `["query"]`} {
		_, _, err := run(t, mk(msg, ""), nil, Options{})
		wantWorkflowError(t, err, `WebSearchFailed("Query parameter is required")`)
	}
	out, _ := mustRun(t, mk("not json", `,"fallback":"Z"`), Options{})
	if out != "recovered" {
		t.Errorf("with a fallback: result = %q, want recovered", out)
	}
}

func TestScenario19LoaderStrictness(t *testing.T) {
	ok := task("A", "sample", []string{"x"}, "", "")
	base := func(tasks, extra string) string {
		return `{"config":{"max_steps":10,"max_time":10},"tasks":[` + tasks + `],"steps":[{"source":"A","target":"__end"}]` + extra + `}`
	}
	rv := `,"return_value":{"input":{"type":"read","key":"r"}}`
	for _, c := range []struct{ name, src, want string }{
		{"check at HEAD", base(task("A", "check", []string{"x"}, "", ""), rv), `tasks[0].operator: unknown operator "check"`},
		{"no return_value", base(ok, ""), `missing field "return_value"`},
		{"lower-case expression", `{"config":{"max_steps":10,"max_time":10},"tasks":[` + ok + `],"steps":[{"source":"A","target":"__end","condition":{"input":{"type":"size","key":"s"},"expression":"equal","expected":"1","target_if_not":"A"}}]` + rv + `}`,
			`steps[0].condition.expression: unknown expression "equal"; expressions are PascalCase: "Equal"`},
		{"required missing", base(task("A", "sample", []string{"x"}, `[{"name":"v","value":{"type":"read","key":"k"}}]`, ""), rv), `tasks[0].inputs[0]: missing field "required"`},
		{"key missing", base(task("A", "sample", []string{"x"}, `[{"name":"v","value":{"type":"input"},"required":true}]`, ""), rv), `tasks[0].inputs[0].value: missing field "key"`},
		{"negative index", base(task("A", "sample", []string{"x"}, `[{"name":"v","value":{"type":"peek","key":"s","index":-1},"required":true}]`, ""), rv), `tasks[0].inputs[0].value.index: expected a non-negative integer, found -1`},
		{"unknown type", base(ok+","+task("B", "sample", []string{"x"}, "", "")+","+task("C", "sample", []string{"x"}, "", "")+","+task("D", "sample", []string{"x"}, `[{"name":"v","value":{"type":"peak","key":"s"},"required":true}]`, ""), rv),
			`tasks[3].inputs[0].value.type: unknown type "peak"; did you mean "peek"?`},
		{"external number", base(ok, rv+`,"external_memory":{"n":5}`), `external_memory.n: invalid entry format`},
		{"external array of numbers", base(ok, rv+`,"external_memory":{"n":[1,2]}`), `external_memory.n[0]: invalid entry format`},
		{"expected a number", `{"config":{"max_steps":10,"max_time":10},"tasks":[` + ok + `],"steps":[{"source":"A","target":"__end","condition":{"input":{"type":"size","key":"s"},"expression":"Equal","expected":3,"target_if_not":"A"}}]` + rv + `}`,
			`steps[0].condition.expected: expected a string, found a number`},
		{"bad JSON", `{"config": {"max_steps": 10,}}`, `test.json:1:29: invalid JSON: unexpected '}', expected a string key`},
	} {
		_, err := Load("test.json", []byte(c.src), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error = %v, want it to contain %q", c.name, err, c.want)
		}
		var e *Error
		if err != nil && (!errors.As(err, &e) || e.Line == 0) {
			t.Errorf("%s: %v has no *Error with a line", c.name, err)
		}
	}
	// Accepted and ignored, with a warning for what may be a typo.
	doc := load(t, `{"name":"n","description":"d","config":{"max_steps":10,"max_time":10,"custom_tool":{}},"tasks":[`+ok+`],"steps":[],"return_value":{"input":{"type":"read","key":"r"}},"extra":1}`)
	if doc.Name != "n" || len(doc.Warnings) != 2 {
		t.Errorf("name %q, warnings %v; want the name kept and 2 warnings (custom_tool, extra)", doc.Name, doc.Warnings)
	}
}

func TestUnknownToolIsAWarningAtLoad(t *testing.T) {
	doc := load(t, `{"config":{"max_steps":10,"max_time":10,"tools":["jina","nope"]},"tasks":[],"steps":[],"return_value":{"input":{"type":"read","key":"r"}}}`)
	if len(doc.Warnings) != 1 || doc.Warnings[0].Path != "config.tools" || doc.Warnings[0].Line != 1 || !strings.Contains(doc.Warnings[0].Msg, "nope") {
		t.Errorf("warnings = %v, want one at config.tools naming the tool", doc.Warnings)
	}
}

func TestScenario19ErrorPosition(t *testing.T) {
	src := "{\"config\":{\"max_steps\":10,\"max_time\":10},\n\"tasks\":[\n  {\"id\":\"A\",\"operator\":\"generatoin\",\"messages\":[]}],\n\"steps\":[],\"return_value\":{\"input\":{\"type\":\"read\",\"key\":\"r\"}}}"
	_, err := Load("w.json", []byte(src), nil)
	want := `w.json:3:24: tasks[0].operator: unknown operator "generatoin"; did you mean "generation"?`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
}

func TestScenario20EndOperatorAndExternalMemory(t *testing.T) {
	src := `{"config":{"max_steps":10,"max_time":10},"external_memory":{"s":["a","b"],"__input":"external"},"tasks":[` +
		task("E", "end", []string{"x"}, `[{"name":"p","value":{"type":"pop","key":"s"},"required":true}]`, `[{"type":"write","key":"ignored","value":"__result"}]`) + "," +
		task("B", "sample", []string{"b"}, "", `[{"type":"write","key":"r","value":"__result"}]`) +
		`],"steps":[{"source":"E","target":"B"},{"source":"B","target":"__end"}],"return_value":{"input":[{"type":"input","key":""},{"type":"read","key":"r"},{"type":"get_all","key":"s"},{"type":"read","key":"ignored"}]}}`
	in := "from the caller"
	out, _, err := run(t, src, &in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "from the caller \nb \na \n \n \n"; out != want {
		t.Errorf("result = %q, want %q", out, want)
	}
	out, _, err = run(t, src, nil, Options{})
	if err != nil || !strings.HasPrefix(out, "external \n") {
		t.Errorf("without input: %q, %v; want the external __input", out, err)
	}

	// Running twice on the same memory (a thread) pushes external memory
	// again, as reusing the reference's memory does.
	doc := load(t, `{"config":{"max_steps":10,"max_time":10},"external_memory":{"s":["a","b"]},"tasks":[],"steps":[],"return_value":{"input":{"type":"get_all","key":"s"}}}`)
	x, err := NewExecutor(Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := x.Plan(doc)
	if err != nil {
		t.Fatal(err)
	}
	th := &engine.Threads{Runner: &engine.Runner{Registry: x.Registry()}, Store: memstore.New()}
	ctx := context.Background()
	for i, want := range []string{"a \nb \n", "a \nb \na \nb \n"} {
		res, err := th.Run(ctx, plan, "t1", map[string]flow.Value{}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Output("result").Str(); got != want {
			t.Errorf("run %d in the thread: %q, want %q", i+1, got, want)
		}
	}
}

func TestScenario17SearchBackend(t *testing.T) {
	hosts := newToolHosts(t)
	src := `{"config":{"max_steps":10,"max_time":10},"tasks":[` +
		task("A", "search", []string{`{"query":"{q}","n_results":1,"lang":"tr"}`}, `[{"name":"q","value":{"type":"input","key":""},"required":true}]`, `[{"type":"write","key":"r","value":"__result"}]`) +
		`],"steps":[{"source":"A","target":"__end"}],"return_value":{"input":{"type":"read","key":"r"}}}`
	in := "expensive cities"
	out, _, err := run(t, src, &in, Options{Tools: tools.Options{Client: hosts.client()}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"link":"example.com/zurich","snippet":"Zurich is the most expensive city.","title":"Zurich"}]`; out != want {
		t.Errorf("DuckDuckGo, n_results 1: %s\nwant %s", out, want)
	}
	if h := hosts.hits; len(h) != 1 || h[0] != "duckduckgo.com /html/" {
		t.Errorf("requests: %v", h)
	}
	out, _, err = run(t, src, &in, Options{Tools: tools.Options{Client: hosts.client(), SerperKey: "k", SerperKeySet: true}})
	if err != nil || !strings.HasPrefix(out, `{"organic":[`) {
		t.Errorf("Serper: %q, %v", out, err)
	}
}

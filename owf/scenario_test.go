package owf

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The compatibility scenarios of ../shared/reference/ollama-workflows.md
// section 12, one test each (the [stub] ones are in stub_test.go).

func TestScenario01NoStepsPureMemory(t *testing.T) {
	src := `{"config":{"max_steps":1,"max_time":10},"external_memory":{"g":"hi","s":["a","b","c"]},"tasks":[],"steps":[],
	"return_value":{"input":[{"type":"read","key":"g"},{"type":"peek","key":"s"},{"type":"peek","key":"s","index":2},{"type":"peek","key":"s","index":3},{"type":"size","key":"s"},{"type":"pop","key":"s"}]}}`
	out, res := mustRun(t, src, Options{})
	if want := "hi \na \nc \n \n3 \nc \n"; out != want {
		t.Errorf("result = %q, want %q", out, want)
	}
	if got := stack(t, res, "s"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("stack s after the run = %q, want [a b]", got)
	}
}

func TestScenario02TargetWithoutStepIsNotRun(t *testing.T) {
	tasks := task("A", "sample", []string{"x"}, "", `[{"type":"write","key":"a","value":"__result"}]`) + "," +
		task("B", "sample", []string{"y"}, "", `[{"type":"write","key":"b","value":"__result"}]`)
	ret := `"return_value":{"input":[{"type":"read","key":"a"},{"type":"read","key":"b"}]}`
	out, res := mustRun(t, `{"config":{"max_steps":5,"max_time":10},"tasks":[`+tasks+`],"steps":[{"source":"A","target":"B"}],`+ret+`}`, Options{})
	if out != "x \n \n" {
		t.Errorf("result = %q, want %q", out, "x \n \n")
	}
	if p := path(res); strings.Contains(p, " B ") {
		t.Errorf("B ran: %s", p)
	}
	out, _ = mustRun(t, `{"config":{"max_steps":5,"max_time":10},"tasks":[`+tasks+`],"steps":[{"source":"A","target":"B"},{"source":"B","target":"__end"}],`+ret+`}`, Options{})
	if out != "x \ny \n" {
		t.Errorf("with B→__end: result = %q, want %q", out, "x \ny \n")
	}
}

func oneTask(maxSteps, maxTime int) string {
	return fmt.Sprintf(`{"config":{"max_steps":%d,"max_time":%d},"tasks":[%s],"steps":[{"source":"A","target":"__end"}],"return_value":{"input":{"type":"read","key":"v"}}}`,
		maxSteps, maxTime, task("A", "sample", []string{"v"}, "", `[{"type":"write","key":"v","value":"__result"}]`))
}

func TestScenario03MaxStepsOffByOne(t *testing.T) {
	_, _, err := run(t, oneTask(1, 10), nil, Options{})
	wantWorkflowError(t, err, "Max steps reached")
	out, _ := mustRun(t, oneTask(2, 10), Options{})
	if out != "v" {
		t.Errorf("max_steps 2: result = %q, want v", out)
	}
	_, _, err = run(t, `{"config":{"max_steps":0,"max_time":10},"tasks":[],"steps":[],"return_value":{"input":{"type":"read","key":"v"}}}`, nil, Options{})
	wantWorkflowError(t, err, "Max steps reached")
}

func TestScenario04MaxTimeZeroComesFirst(t *testing.T) {
	_, _, err := run(t, oneTask(0, 0), nil, Options{})
	wantWorkflowError(t, err, "Max execution time exceeded")
	_, _, err = run(t, oneTask(5, 0), nil, Options{})
	wantWorkflowError(t, err, "Max execution time exceeded")
}

func TestScenario05LoopOnSize(t *testing.T) {
	src := `{"config":{"max_steps":10,"max_time":10},"external_memory":{"w":["x"]},
	"tasks":[` + task("A", "sample", []string{"{v}"}, `[{"name":"v","value":{"type":"string","key":"w"},"required":true}]`, `[{"type":"push","key":"acc","value":"__result"}]`) + `],
	"steps":[{"source":"A","target":"__end","condition":{"input":{"type":"size","key":"acc"},"expression":"GreaterThan","expected":"2","target_if_not":"A"}}],
	"return_value":{"input":{"type":"get_all","key":"acc"},"to_json":true}}`
	out, res := mustRun(t, src, Options{})
	if want := `["w: x","w: x","w: x"]`; out != want {
		t.Errorf("result = %s, want %s", out, want)
	}
	if n := strings.Count(path(res), "A"); n != 3 {
		t.Errorf("A ran %d times, want 3 (%s)", n, path(res))
	}
}

func popSample(expected, fallback string, extra string) string {
	fb := ""
	if fallback != "" {
		fb = `,"fallback":"` + fallback + `"`
	}
	return `{"config":{"max_steps":10,"max_time":10},"external_memory":{"vars":["color","size"],"color":["red"],"size":["L"]},
	"tasks":[` + task("A", "sample", []string{"{v}"}, `[{"name":"v","value":{"type":"pop","key":"vars"},"required":true}]`, `[{"type":"push","key":"p","value":"__result"}]`) + extra + `],
	"steps":[{"source":"A","target":"__end","condition":{"input":{"type":"size","key":"vars"},"expression":"Equal","expected":"` + expected + `","target_if_not":"A"}` + fb + `}` +
		map[bool]string{true: `,{"source":"Z","target":"__end"}`, false: ""}[fallback == "Z"] + `],
	"return_value":{"input":[{"type":"get_all","key":"p"},{"type":"read","key":"z"}]}}`
}

func TestScenario06PopDrivenSampling(t *testing.T) {
	out, _ := mustRun(t, popSample("0", "", ""), Options{})
	if want := "size: L \ncolor: red \n \n \n"; out != want {
		t.Errorf("result = %q, want %q", out, want)
	}
}

func TestScenario07RequiredInputMissingThenFallback(t *testing.T) {
	_, res, err := run(t, popSample("-1", "", ""), nil, Options{})
	wantWorkflowError(t, err, "InvalidInput")
	if res == nil || strings.Count(path(res), "A") != 3 {
		t.Errorf("A should run three times before failing: %v", res)
	}
	z := "," + task("Z", "sample", []string{"fallback"}, "", `[{"type":"write","key":"z","value":"__result"}]`)
	out, res := mustRun(t, popSample("-1", "Z", z), Options{})
	if want := "size: L \ncolor: red \n \nfallback \n"; out != want {
		t.Errorf("with fallback Z: result = %q, want %q", out, want)
	}
	if !strings.HasSuffix(path(res), "A Z __return") {
		t.Errorf("path = %s, want A three times then Z", path(res))
	}
	// The reference takes the fallback silently; weft reports it, once
	// for the failure that took it.
	if fb := res.Fallbacks(); len(fb) != 1 || fb[0].String() != `node A fell back: task A failed (InvalidInput); took its fallback step, to Z` {
		t.Errorf("fallbacks = %+v", fb)
	}
	out, _ = mustRun(t, popSample("-1", "__end", ""), Options{})
	if want := "size: L \ncolor: red \n \n \n"; out != want {
		t.Errorf("with fallback __end: result = %q, want %q", out, want)
	}
}

func TestScenario08SideEffectsSurviveFailure(t *testing.T) {
	src := `{"config":{"max_steps":10,"max_time":10},"external_memory":{"s":["a","b"]},
	"tasks":[` + task("A", "sample", []string{"x"}, `[{"name":"p","value":{"type":"pop","key":"s"},"required":true},{"name":"m","value":{"type":"read","key":"missing"},"required":true}]`, "") + `],
	"steps":[{"source":"A","target":"__end"}],"return_value":{"input":{"type":"read","key":"x"}}}`
	_, res, err := run(t, src, nil, Options{})
	wantWorkflowError(t, err, "InvalidInput")
	if got := stack(t, res, "s"); !slices.Equal(got, []string{"a"}) {
		t.Errorf("stack s = %q, want [a]: the pop before the failure is kept", got)
	}
}

func TestScenario09ConditionInputSideEffects(t *testing.T) {
	// A loops while the popped value is not "a": each evaluation pops.
	src := `{"config":{"max_steps":10,"max_time":10},"external_memory":{"s":["a","b","c","d"]},
	"tasks":[` + task("A", "sample", []string{"n"}, "", `[{"type":"push","key":"runs","value":"__result"}]`) + `],
	"steps":[{"source":"A","target":"__end","condition":{"input":{"type":"pop","key":"s"},"expression":"Equal","expected":"b","target_if_not":"A"}}],
	"return_value":{"input":[{"type":"get_all","key":"s"},{"type":"size","key":"runs"}]}}`
	out, _ := mustRun(t, src, Options{})
	if want := "a \n \n3 \n"; out != want {
		t.Errorf("result = %q, want %q (d, c, b popped by three evaluations)", out, want)
	}
}

func cond(left, expr, expected string) string {
	return fmt.Sprintf(`{"config":{"max_steps":10,"max_time":10},"tasks":[%s,%s,%s],
	"steps":[{"source":"A","target":"T","condition":{"input":{"type":"string","key":%q},"expression":%q,"expected":%q,"target_if_not":"F"}},{"source":"T","target":"__end"},{"source":"F","target":"__end"}],
	"return_value":{"input":{"type":"read","key":"r"}}}`,
		task("A", "sample", []string{"a"}, "", ""),
		task("T", "sample", []string{"true"}, "", `[{"type":"write","key":"r","value":"__result"}]`),
		task("F", "sample", []string{"false"}, "", `[{"type":"write","key":"r","value":"__result"}]`),
		left, expr, expected)
}

func TestScenario10ExpressionTable(t *testing.T) {
	for _, c := range []struct {
		left, expr, expected string
		want                 string
	}{
		{"abc", "Equal", "abc", "true"},
		{"abc", "Equal", "abd", "false"},
		{"abc", "NotEqual", "abd", "true"},
		{"hello world", "Contains", "lo w", "true"},
		{"Hello", "Contains", "hello", "false"},
		{"Hello", "NotContains", "hello", "true"},
		{"abc", "Contains", "", "true"},
		{"10", "GreaterThan", "9", "true"},
		{"1e1", "LessThanOrEqual", "10", "true"},
		{"-2.5", "LessThan", "+4", "true"},
		{"3", "GreaterThanOrEqual", "3", "true"},
		{"NaN", "GreaterThan", "1", "false"},
	} {
		out, _ := mustRun(t, cond(c.left, c.expr, c.expected), Options{})
		if out != c.want {
			t.Errorf("%s(%q, %q) = %s, want %s", c.expr, c.left, c.expected, out, c.want)
		}
	}
	for _, c := range [][3]string{{"", "GreaterThanOrEqual", "1"}, {"7 apples", "LessThan", "9"}, {"3", "GreaterThan", " 3"}} {
		_, _, err := run(t, cond(c[0], c[1], c[2]), nil, Options{})
		var we *WorkflowError
		if !errors.As(err, &we) || !strings.Contains(we.Msg, "is not a number") {
			t.Errorf("%s(%q, %q): error = %v, want a run failure naming the number (the reference panics)", c[1], c[0], c[2], err)
		}
	}
}

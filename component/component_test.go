package component_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/store"
)

// journal records what happens to the fake components, in order.
type journal struct{ events []string }

func (j *journal) add(e string) { j.events = append(j.events, e) }

// fakeStore is a store.* module with a nested config, a secret, a
// dependency and a validation rule, for the registry's tests.
type fakeStore struct {
	Path  string           `json:"path"`
	Key   component.Secret `json:"key"`
	Retry struct {
		Timeout string `json:"timeout"`
	} `json:"retry"`
	Hosts []struct {
		Token component.Secret `json:"token"`
	} `json:"hosts"`
	Dep  *component.Spec `json:"dep,omitempty"`
	Fail string          `json:"fail"` // "provision" or "validate"

	j      *journal
	key    string
	closed int
}

func (f *fakeStore) Provision(ctx context.Context, c *component.Context) error {
	f.j.add("provision " + f.Path)
	if !f.Key.IsZero() {
		v, err := c.Secret(f.Key)
		if err != nil {
			return err
		}
		f.key = v
	}
	if f.Dep != nil {
		if _, err := c.Load(ctx, *f.Dep); err != nil {
			return err
		}
	}
	if f.Fail == "provision" {
		return errors.New("provision refused")
	}
	return nil
}

func (f *fakeStore) Validate() error {
	if f.Fail == "validate" {
		return errors.New("path must be absolute")
	}
	return nil
}

func (f *fakeStore) Close() error {
	f.closed++
	if f.closed == 1 {
		f.j.add("close " + f.Path)
	}
	return nil
}

func (f *fakeStore) Store() store.Store { return nil }

// fakeLLM is an llm.* module.
type fakeLLM struct {
	Name string `json:"name"`
	Def  string `json:"model"`
}

func (f *fakeLLM) Provision(context.Context, *component.Context) error { return nil }
func (f *fakeLLM) Provider() string                                    { return f.Name }
func (f *fakeLLM) DefaultModel() string                                { return f.Def }
func (f *fakeLLM) Open(name string) (llm.Model, error) {
	if name == "" {
		name = f.Def
	}
	return namedModel(f.Name + ":" + name), nil
}

type namedModel string

func (namedModel) Chat(context.Context, *llm.Request, func(llm.Chunk) error) (*llm.Response, error) {
	return nil, errors.New("not a real model")
}

// notASearch is a Component of no kind.
type notASearch struct{}

func (notASearch) Provision(context.Context, *component.Context) error { return nil }

func newRegistry(t *testing.T, j *journal) *component.Registry {
	t.Helper()
	r := component.NewRegistry()
	for _, m := range []component.Module{
		{ID: "store.fake", New: func() component.Component { return &fakeStore{j: j} }, Doc: "a fake store"},
		{ID: "llm.fake", New: func() component.Component { return &fakeLLM{Name: "fake"} }, Doc: "a fake model"},
	} {
		if err := r.Register(m); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func env(vars map[string]string) *component.Env {
	return &component.Env{Getenv: func(k string) string { return vars[k] }}
}

func TestRegisterRefusesBadIDsAndDuplicates(t *testing.T) {
	r := newRegistry(t, &journal{})
	newLLM := func() component.Component { return &fakeLLM{} }
	for _, tc := range []struct {
		m    component.Module
		kind component.ErrorKind
	}{
		{component.Module{ID: "", New: newLLM}, component.ErrBadID},
		{component.Module{ID: "ollama", New: newLLM}, component.ErrBadID},
		{component.Module{ID: "llm.", New: newLLM}, component.ErrBadID},
		{component.Module{ID: "LLM.Ollama", New: newLLM}, component.ErrBadID},
		{component.Module{ID: "llm ollama", New: newLLM}, component.ErrBadID},
		{component.Module{ID: "model.ollama", New: newLLM}, component.ErrBadID},
		{component.Module{ID: "llm.fake", New: newLLM}, component.ErrDuplicate},
		{component.Module{ID: "llm.other"}, component.ErrBadModule},
		{component.Module{ID: "llm.nil", New: func() component.Component { return nil }}, component.ErrBadModule},
		{component.Module{ID: "search.wrong", New: func() component.Component { return notASearch{} }}, component.ErrBadModule},
		{component.Module{ID: "tool.wrong", New: newLLM}, component.ErrBadModule},
	} {
		err := r.Register(tc.m)
		var ce *component.Error
		if !errors.Is(err, tc.kind) || !errors.As(err, &ce) || ce.ID != tc.m.ID {
			t.Errorf("Register(%q) = %v, want an *Error of kind %q naming the id", tc.m.ID, err, tc.kind)
		}
	}
	if got, want := r.IDs(), []string{"llm.fake", "store.fake"}; !slices.Equal(got, want) {
		t.Errorf("IDs() = %v, want %v: a refused module must not be registered", got, want)
	}
	if err := r.Register(component.Module{ID: "llm.fake-2.v1", New: newLLM}); err != nil {
		t.Errorf("Register(llm.fake-2.v1) = %v, want nil", err)
	}
	if got := r.Modules(component.NSLLM); len(got) != 2 || got[0].ID != "llm.fake" || got[1].ID != "llm.fake-2.v1" {
		t.Errorf("Modules(llm) = %v", got)
	}
}

func TestLoadUnknownModule(t *testing.T) {
	r := newRegistry(t, &journal{})
	_, err := r.Load(context.Background(), component.Spec{ID: "llm.nope"}, nil)
	if !errors.Is(err, component.ErrUnknown) || !strings.Contains(err.Error(), "llm.fake") {
		t.Fatalf("err = %v, want ErrUnknown listing the known modules", err)
	}
}

func TestLoadConfigErrorsNameThePath(t *testing.T) {
	r := newRegistry(t, &journal{})
	for _, tc := range []struct{ config, path, text string }{
		{`{"path":"a","retry":{"timout":"1s"}}`, ".retry.timout", `unknown field "timout"`},
		{`{"pathh":"a"}`, ".pathh", `unknown field "pathh"`},
		{`{"hosts":[{"token":{"env":"A"}},{"tokn":{}}]}`, ".hosts[1].tokn", `unknown field "tokn"`},
		{`{"retry":{"timeout":5}}`, ".retry.timeout", "cannot unmarshal number"},
	} {
		_, err := r.Load(context.Background(), component.Spec{ID: "store.fake", Config: json.RawMessage(tc.config)}, nil)
		var ce *component.Error
		if !errors.As(err, &ce) || ce.Kind != component.ErrConfig || ce.Path != tc.path || ce.ID != "store.fake" {
			t.Errorf("config %s: err = %#v, want ErrConfig at %s", tc.config, err, tc.path)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "store.fake") || !strings.Contains(msg, tc.path) || !strings.Contains(msg, tc.text) {
			t.Errorf("config %s: message %q should name the module, %s and %s", tc.config, msg, tc.path, tc.text)
		}
	}
	// The same field names in another case are accepted, as encoding/json does.
	x, err := r.Load(context.Background(), component.Spec{ID: "store.fake", Config: json.RawMessage(`{"Path":"p"}`)}, nil)
	if err != nil || x.(*fakeStore).Path != "p" {
		t.Errorf("Load(Path) = %v, %v", x, err)
	}
}

func TestSecretResolvedFromEnvAndNeverSerialised(t *testing.T) {
	const value = "sk-live-SECRET-0123456789"
	r := newRegistry(t, &journal{})
	spec := component.Spec{ID: "store.fake", Config: json.RawMessage(`{"path":"p","key":{"env":"FAKE_KEY"},"hosts":[{"token":{"env":"HOST_TOKEN"}}]}`)}
	x, err := r.Load(context.Background(), spec, env(map[string]string{"FAKE_KEY": value}))
	if err != nil {
		t.Fatal(err)
	}
	f := x.(*fakeStore)
	if f.key != value {
		t.Errorf("resolved key = %q, want the variable's value", f.key)
	}
	out, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), value) || !strings.Contains(string(out), `"key":{"env":"FAKE_KEY"}`) {
		t.Errorf("marshalled component = %s: want the reference, never the value", out)
	}
	again, err := component.SpecOf("store.fake", x)
	if err != nil {
		t.Fatal(err)
	}
	rs := component.RunSpec{Workflow: "sha256:abc", Components: []component.Spec{again}}
	b, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), value) {
		t.Errorf("run spec %s holds the secret", b)
	}
	// The spec round-trips: loading it again resolves the same secret.
	var back component.RunSpec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	y, err := r.Load(context.Background(), back.Components[0], env(map[string]string{"FAKE_KEY": value}))
	if err != nil || y.(*fakeStore).key != value || y.(*fakeStore).Path != "p" {
		t.Errorf("reloaded = %+v, %v", y, err)
	}
	if s := fmtSecret(f.Key); strings.Contains(s, value) || s != "$FAKE_KEY" {
		t.Errorf("Secret prints as %q", s)
	}
}

func fmtSecret(s component.Secret) string { return s.String() }

func TestLiteralSecretRefused(t *testing.T) {
	const value = "sk-live-LITERAL-42"
	r := newRegistry(t, &journal{})
	for _, tc := range []struct{ config, path string }{
		{`{"key":"` + value + `"}`, ".key"},
		{`{"key":{"value":"` + value + `"}}`, ".key"},
		{`{"key":{"env":"` + value + `"}}`, ".key"},
		{`{"key":42}`, ".key"},
		{`{"hosts":[{"token":"` + value + `"}]}`, ".hosts[0].token"},
	} {
		_, err := r.Load(context.Background(), component.Spec{ID: "store.fake", Config: json.RawMessage(tc.config)}, nil)
		var ce *component.Error
		if !errors.As(err, &ce) || ce.Kind != component.ErrConfig || ce.Path != tc.path {
			t.Errorf("config %s: err = %v, want ErrConfig at %s", tc.config, err, tc.path)
			continue
		}
		if strings.Contains(err.Error(), value) {
			t.Errorf("config %s: the error %q echoes the secret", tc.config, err)
		}
		if !errors.Is(err, component.ErrLiteralSecret) {
			t.Errorf("config %s: err = %v, want ErrLiteralSecret", tc.config, err)
		}
	}
}

func TestSecretUnset(t *testing.T) {
	r := newRegistry(t, &journal{})
	_, err := r.Load(context.Background(), component.Spec{ID: "store.fake", Config: json.RawMessage(`{"key":{"env":"NOT_SET_ANYWHERE"}}`)}, env(nil))
	if !errors.Is(err, component.ErrSecret) || !strings.Contains(err.Error(), "$NOT_SET_ANYWHERE is not set") {
		t.Fatalf("err = %v, want ErrSecret naming the variable", err)
	}
}

func TestFailureClosesWhatWasProvisioned(t *testing.T) {
	for _, step := range []struct {
		fail string
		kind component.ErrorKind
	}{{"validate", component.ErrInvalid}, {"provision", component.ErrProvision}} {
		j := &journal{}
		r := newRegistry(t, j)
		cfg := `{"path":"outer","fail":"` + step.fail + `","dep":{"id":"store.fake","config":{"path":"inner"}}}`
		x, err := r.Load(context.Background(), component.Spec{ID: "store.fake", Config: json.RawMessage(cfg)}, nil)
		if x != nil || !errors.Is(err, step.kind) {
			t.Errorf("%s failing: Load = %v, %v, want nil and %q", step.fail, x, err, step.kind)
		}
		want := []string{"provision outer", "provision inner", "close outer", "close inner"}
		if !slices.Equal(j.events, want) {
			t.Errorf("%s failing: events %q, want %q", step.fail, j.events, want)
		}
	}
}

func TestLoadAllClosesEarlierOnFailure(t *testing.T) {
	j := &journal{}
	r := newRegistry(t, j)
	specs := []component.Spec{
		{ID: "store.fake", Config: json.RawMessage(`{"path":"a"}`)},
		{ID: "store.fake", Config: json.RawMessage(`{"path":"b"}`)},
		{ID: "store.fake", Config: json.RawMessage(`{"path":"c","fail":"validate"}`)},
	}
	if _, err := r.LoadAll(context.Background(), specs, nil); !errors.Is(err, component.ErrInvalid) {
		t.Fatalf("LoadAll err = %v", err)
	}
	want := []string{"provision a", "provision b", "provision c", "close c", "close b", "close a"}
	if !slices.Equal(j.events, want) {
		t.Errorf("events %q, want %q", j.events, want)
	}
}

func TestSetModels(t *testing.T) {
	r := newRegistry(t, &journal{})
	set, err := r.LoadAll(context.Background(), []component.Spec{
		{ID: "store.fake"},
		{ID: "llm.fake", Config: json.RawMessage(`{"model":"small"}`)},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	ms, err := set.Models()
	if err != nil {
		t.Fatal(err)
	}
	if ms.Default() != "fake:small" {
		t.Errorf("Default = %q", ms.Default())
	}
	for spec, want := range map[string]string{"": "fake:small", "fake": "fake:small", "fake:big": "fake:big", "FAKE: big ": "fake:big"} {
		m, err := ms.Open(spec)
		if err != nil || m != namedModel(want) {
			t.Errorf("Open(%q) = %v, %v, want %s", spec, m, err, want)
		}
	}
	if _, err := ms.Open("openai:gpt"); !errors.Is(err, component.ErrNoProvider) {
		t.Errorf("Open(openai:gpt) err = %v, want ErrNoProvider", err)
	}
	if got := len(component.Of[component.StoreProvider](set)); got != 1 {
		t.Errorf("Of[StoreProvider] has %d", got)
	}
}

func TestSetRefusesTwoProvidersOfOneName(t *testing.T) {
	r := newRegistry(t, &journal{})
	set, err := r.LoadAll(context.Background(), []component.Spec{
		{ID: "llm.fake", Config: json.RawMessage(`{"model":"a"}`)},
		{ID: "llm.fake", Config: json.RawMessage(`{"model":"b"}`)},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	_, err = set.Models()
	var ce *component.Error
	if !errors.Is(err, component.ErrDuplicate) || !errors.As(err, &ce) || ce.ID != "llm.fake" || !strings.Contains(err.Error(), `"fake"`) {
		t.Errorf("Models() err = %v, want ErrDuplicate naming the provider", err)
	}
}

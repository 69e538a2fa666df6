package component_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
)

// A run spec, as a store keeps it with a thread, is loaded into the
// components of the run. The key of the model is the name of a variable,
// read from the environment when the model is provisioned.
func Example() {
	dir, _ := os.MkdirTemp("", "weft-example")
	defer os.RemoveAll(dir)
	doc := `{
	  "workflow": "sha256:5d41402abc4b2a76b9719d911017c592",
	  "components": [
	    {"id": "llm.openai", "config": {"base_url": "http://127.0.0.1:8000/v1", "model": "qwen2.5-7b",
	                                    "api_key": {"env": "VLLM_KEY"}}},
	    {"id": "tool.http", "config": {"allow_hosts": ["api.example.com"], "timeout": "10s"}},
	    {"id": "store.sqlite", "config": {"path": "` + filepath.ToSlash(filepath.Join(dir, "threads.db")) + `"}}
	  ]
	}`
	var spec component.RunSpec
	if err := json.Unmarshal([]byte(doc), &spec); err != nil {
		fmt.Println(err)
		return
	}
	reg, err := builtin.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	env := &component.Env{Getenv: func(k string) string {
		return map[string]string{"VLLM_KEY": "sk-local-123"}[k]
	}}
	set, err := reg.LoadAll(context.Background(), spec.Components, env)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()

	models, _ := set.Models()
	tools, _ := set.Tools(context.Background())
	stores := component.Of[component.StoreProvider](set)
	fmt.Println("default model:", models.Default())
	fmt.Println("tools:", tools[0].Def.Name)
	fmt.Println("stores:", len(stores))

	// Marshalled again, the spec holds the key's variable, not the key.
	out, _ := json.Marshal(set.Specs()[0])
	fmt.Println(string(out))

	// A literal key is refused.
	_, err = reg.Load(context.Background(), component.Spec{ID: "llm.openai", Config: json.RawMessage(`{"api_key": "sk-live-123"}`)}, env)
	fmt.Println(err)
	// Output:
	// default model: openai:qwen2.5-7b
	// tools: http_request
	// stores: 1
	// {"id":"llm.openai","config":{"base_url":"http://127.0.0.1:8000/v1","model":"qwen2.5-7b","api_key":{"env":"VLLM_KEY"}}}
	// component llm.openai: config .api_key: bad config: a secret is given by reference only: {"env": "VARIABLE"}, the environment variable holding it
}

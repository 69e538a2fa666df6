package tools_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weftlang/weft/tools"
)

// The retrieve tool over the sample documents of examples/intentqa, called
// as a model would call it: from Go, without the weft command.
func Example() {
	set, err := tools.New(tools.Config{Docs: "../examples/intentqa/docs/reports.json"})
	if err != nil {
		panic(err)
	}
	defer set.Close()
	reg, err := set.Registry()
	if err != nil {
		panic(err)
	}
	retrieve, _ := reg.Get(tools.Retrieve)
	out, err := retrieve.Call(context.Background(), json.RawMessage(`{"query":"battery-electric ferry delivered","k":1}`))
	if err != nil {
		panic(err)
	}
	var r tools.RetrieveResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		panic(err)
	}
	fmt.Println(r.Sources[0])
	// Output: halvorsen-marine-fleet
}

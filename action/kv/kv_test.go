package kv_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weftlang/weft/action/kv"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/memory"
)

const memoryWF = `workflow Memory {
  parameters { user: String }
  nodes {
    node remember {
      action: "kv.put"
      inputs {
        namespace: ["users", user]
        key: "last"
        value: {"text": input_text}
      }
    }
    node recall {
      action: "kv.get"
      inputs {
        namespace: "users." + user
        key: "last"
      }
      outputs {
        value: Object
        found: Bool
      }
    }
    node missing {
      action: "kv.get"
      inputs {
        namespace: ["users", "nobody"]
        key: "last"
      }
      outputs {
        found: Bool
      }
    }
    node all {
      action: "kv.search"
      inputs {
        namespace: ["users"]
        filter: {"text": input_text}
      }
      outputs {
        items: List[Object]
      }
    }
  }
  edges {
    edge { from: remember; to: recall }
    edge { from: recall; to: missing }
    edge { from: missing; to: all }
  }
  initial: remember
  finals: [ all ]
}
`

func TestActions(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	reg := engine.NewRegistry()
	kv.Register(reg, st)
	svc, err := service.New(service.Options{Store: st, Actions: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	wf, err := svc.Open(ctx, service.Bytes("memory.wf", []byte(memoryWF)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(ctx, service.StartRequest{Workflow: wf, Input: map[string]flow.Value{"input_text": flow.StringValue("hello"), "user": flow.StringValue("ann")}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Outputs.Get("items"))
	got := string(b)
	if !strings.Contains(got, `"key":"last"`) || !strings.Contains(got, `"namespace":["users","ann"]`) || !strings.Contains(got, `"value":{"text":"hello"}`) {
		t.Fatalf("items = %s", got)
	}
	it, err := st.Item(ctx, []string{"users", "ann"}, "last")
	if err != nil || string(it.Value) != `{"text":"hello"}` {
		t.Fatalf("stored item %v, %v", it, err)
	}
	if res.Outputs.Get("items").Len() != 1 {
		t.Fatalf("items = %s", got)
	}
}

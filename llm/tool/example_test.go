package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/tool"
)

// scripted is a stand-in for a real llm.Model: it asks for one tool call,
// then answers with the result it was sent.
type scripted struct{ call llm.ToolCall }

func (s scripted) Chat(_ context.Context, req *llm.Request, _ func(llm.Chunk) error) (*llm.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role != llm.ToolRole {
		return &llm.Response{Message: llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{s.call}}}, nil
	}
	return &llm.Response{Message: llm.Message{Role: llm.Assistant, Content: "The tool said " + last.Content}}, nil
}

type OrderArgs struct {
	SKU      string `json:"sku" desc:"the product code"`
	Quantity int    `json:"quantity" desc:"how many to order"`
	Speed    string `json:"speed,omitempty" enum:"standard,express"`
}

type Order struct {
	ID    string `json:"id"`
	Total int    `json:"total_cents"`
}

func ExampleFunc() {
	order, err := tool.Func("place_order", "Place an order for a product.",
		func(ctx context.Context, a OrderArgs) (Order, error) {
			return Order{ID: "o-1", Total: 250 * a.Quantity}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(order.Def.Parameters))

	res, err := order.Call(context.Background(), json.RawMessage(`{"sku":"A7","quantity":2}`))
	fmt.Println(res, err)
	_, err = order.Call(context.Background(), json.RawMessage(`{"sku":"A7","qty":2}`))
	fmt.Println(err)
	// Output:
	// {"additionalProperties":false,"properties":{"quantity":{"description":"how many to order","type":"integer"},"sku":{"description":"the product code","type":"string"},"speed":{"enum":["standard","express"],"type":"string"}},"required":["quantity","sku"],"type":"object"}
	// {"id":"o-1","total_cents":500} <nil>
	// invalid arguments for tool "place_order": field "qty": unknown field (the fields are "quantity", "sku", "speed"); field "quantity": missing required field
}

func ExampleLoop() {
	order, err := tool.Func("place_order", "Place an order for a product.",
		func(ctx context.Context, a OrderArgs) (Order, error) {
			return Order{ID: "o-1", Total: 250 * a.Quantity}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	reg, err := tool.NewRegistry(order)
	if err != nil {
		log.Fatal(err)
	}
	var m llm.Model = scripted{llm.ToolCall{ID: "c1", Name: "place_order", Arguments: json.RawMessage(`{"sku":"A7","quantity":3}`)}}
	req := &llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "Order three A7."}}}

	res, err := tool.Loop(context.Background(), m, req, reg, tool.LoopOptions{
		MaxSteps: 4,
		Observe: func(e tool.Event) {
			if e.Kind == tool.EventCall {
				fmt.Printf("call %s %s\n", e.Name, e.Arguments)
			} else {
				fmt.Printf("result %s (err %v)\n", e.Content, e.Err)
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Response.Message.Content)
	fmt.Println(res.Steps, "steps,", len(res.Messages), "messages")
	// Output:
	// call place_order {"sku":"A7","quantity":3}
	// result {"id":"o-1","total_cents":750} (err <nil>)
	// The tool said {"id":"o-1","total_cents":750}
	// 2 steps, 4 messages
}

func ExampleHTTP() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "pong")
	}))
	defer srv.Close()

	h := tool.HTTP(srv.Client(), tool.HTTPOptions{
		Allow:   func(u *url.URL) bool { return u.Hostname() == "127.0.0.1" },
		MaxBody: 16 << 10,
	})
	content, err := h.Call(context.Background(), json.RawMessage(fmt.Sprintf(`{"url":%q}`, srv.URL+"/ping")))
	if err != nil {
		log.Fatal(err)
	}
	var res tool.HTTPResult
	if err := json.Unmarshal([]byte(content), &res); err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Headers["Content-Type"], res.Body)
	_, err = h.Call(context.Background(), json.RawMessage(`{"url":"https://example.com/"}`))
	fmt.Println(err)
	// Output:
	// 200 text/plain pong
	// requests to https://example.com/ are not allowed
}

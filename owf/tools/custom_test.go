package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCustomHTTPDefinition(t *testing.T) {
	tool := NewCustomHTTP(CustomHTTP{
		Name: "PriceFeedRequest", Description: "Fetches the price of a coin.",
		URL: "http://unused", Method: "POST",
		Body: map[string]string{"symbol": "BTC", "currency": "the value is never used"},
	}, Options{})
	eq(t, "name", tool.Def.Name, "PriceFeedRequest")
	eq(t, "description", tool.Def.Description, "Fetches the price of a coin.")
	eq(t, "parameters", string(tool.Def.Parameters),
		`{"properties":{"currency":{"description":"The value for currency","type":"string"},"symbol":{"description":"The value for symbol","type":"string"}},"required":["currency","symbol"],"type":"object"}`)

	empty := NewCustomHTTP(CustomHTTP{Name: "Ping", URL: "http://unused", Method: "GET"}, Options{})
	eq(t, "parameters without body", string(empty.Def.Parameters), `{"properties":{},"required":[],"type":"object"}`)
}

func TestCustomHTTPPost(t *testing.T) {
	srv := newFake(t, 500, "text/plain", "upstream failed: try later")
	tool := NewCustomHTTP(CustomHTTP{
		Name: "PriceFeedRequest", URL: srv.URL + "/api/v1/price?src=owf", Method: "POST",
		Headers: map[string]string{"X-Custom": "custom-value", "Accept": "text/plain"},
		Body:    map[string]string{"symbol": "", "currency": ""},
	}, Options{APIKey: "api-key"})
	// The result is the body whatever the status.
	out := mustCall(t, tool, `{"symbol":"BTC","currency":"usd","extra":"sent too"}`)
	eq(t, "output", out, "upstream failed: try later")
	r := srv.only(t)
	eq(t, "method", r.Method, "POST")
	eq(t, "uri", r.URI, "/api/v1/price?src=owf")
	wantHeader(t, r, "X-Custom", "custom-value")
	wantHeader(t, r, "Accept", "text/plain")
	wantHeader(t, r, "Authorization", "Bearer api-key")
	wantHeader(t, r, "Content-Type", "application/json")
	eq(t, "body", r.Body, `{"currency":"usd","extra":"sent too","symbol":"BTC"}`)
}

func TestCustomHTTPMethods(t *testing.T) {
	for _, method := range []string{"PUT", "DELETE"} {
		srv := newFake(t, 200, "application/json", `{"ok":true}`)
		tool := NewCustomHTTP(CustomHTTP{Name: "T", URL: srv.URL + "/r", Method: method,
			Headers: map[string]string{"Content-Type": "application/vnd.api+json"}}, Options{})
		eq(t, method+" output", mustCall(t, tool, `{"id":"7"}`), `{"ok":true}`)
		r := srv.only(t)
		eq(t, method+" method", r.Method, method)
		eq(t, method+" body", r.Body, `{"id":"7"}`)
		wantHeader(t, r, "Content-Type", "application/vnd.api+json") // a configured Content-Type is kept
		wantHeader(t, r, "Authorization")
	}
	// Empty arguments are an empty object.
	srv := newFake(t, 200, "text/plain", "done")
	tool := NewCustomHTTP(CustomHTTP{Name: "T", URL: srv.URL, Method: "POST"}, Options{})
	eq(t, "output", mustCall(t, tool, ``), "done")
	eq(t, "empty body", srv.only(t).Body, `{}`)
}

func TestCustomHTTPGetIgnoresArguments(t *testing.T) {
	srv := newFake(t, 404, "application/json", `{"error":"no such coin"}`)
	tool := NewCustomHTTP(CustomHTTP{
		Name: "Price", URL: srv.URL + "/price", Method: "GET",
		Headers: map[string]string{"Authorization": "Token configured"},
		Body:    map[string]string{"symbol": ""},
	}, Options{APIKey: "api-key"})
	// Arguments are ignored, even non-string ones.
	out := mustCall(t, tool, `{"symbol":"BTC","n":3}`)
	eq(t, "output", out, `{"error":"no such coin"}`)
	r := srv.only(t)
	eq(t, "method", r.Method, "GET")
	eq(t, "uri", r.URI, "/price")
	eq(t, "body", r.Body, "")
	wantHeader(t, r, "Content-Type")
	// Both the configured header and the bearer are sent, as reqwest appends.
	wantHeader(t, r, "Authorization", "Token configured", "Bearer api-key")
}

func TestCustomHTTPBadMethod(t *testing.T) {
	srv := newFake(t, 200, "text/plain", "x")
	for _, method := range []string{"PATCH", "get", "Post", ""} {
		tool := NewCustomHTTP(CustomHTTP{Name: "T", URL: srv.URL, Method: method}, Options{})
		_, err := call(t, tool, `{}`)
		e := asError[*MethodError](t, err)
		eq(t, "method", e.Method, method)
		eq(t, "tool", e.Tool, "T")
		if !strings.HasPrefix(err.Error(), "Unsupported HTTP method") {
			t.Errorf("message %q does not start with the reference's", err.Error())
		}
	}
	_, err := call(t, NewCustomHTTP(CustomHTTP{Name: "T", URL: srv.URL, Method: "PATCH"}, Options{}), `{}`)
	eq(t, "message", err.Error(), `Unsupported HTTP method "PATCH" in tool "T" (GET, POST, PUT or DELETE)`)
	eq(t, "requests", srv.count(), 0)
}

func TestCustomHTTPBadArguments(t *testing.T) {
	srv := newFake(t, 200, "text/plain", "x")
	tool := NewCustomHTTP(CustomHTTP{Name: "Price", URL: srv.URL, Method: "POST"}, Options{})
	cases := []struct{ args, arg, msg string }{
		{`{"symbol":"BTC","amount":3}`, "amount", `tool "Price": argument "amount": must be a string, got 3`},
		{`{"b":null,"a":["x"]}`, "a", `tool "Price": argument "a": must be a string, got ["x"]`},
		{`"BTC"`, "", `tool "Price": arguments: not a JSON object: "BTC"`},
	}
	for _, c := range cases {
		_, err := call(t, tool, c.args)
		e := asError[*ArgsError](t, err)
		eq(t, c.args+" arg", e.Arg, c.arg)
		eq(t, c.args+" message", err.Error(), c.msg)
	}
	eq(t, "requests", srv.count(), 0)
}

func TestCustomSchema(t *testing.T) {
	params := json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}`)
	tool := NewCustomSchema("get_weather", "Weather of a city.", params)
	eq(t, "name", tool.Def.Name, "get_weather")
	eq(t, "description", tool.Def.Description, "Weather of a city.")
	eq(t, "parameters verbatim", string(tool.Def.Parameters), string(params))
	out, err := call(t, tool, `{"city":"Paris"}`)
	eq(t, "output", out, "")
	e := asError[*CustomModeError](t, err)
	eq(t, "tool", e.Tool, "get_weather")
	eq(t, "message", err.Error(), "Custom mode can't execute tools, use function_calling_raw")
}

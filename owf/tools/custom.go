package tools

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"

	"github.com/weftlang/weft/llm"
)

// CustomHTTP is an item of config.custom_tools with mode "http_request",
// or the older single config.custom_tool.
type CustomHTTP struct {
	Name, Description string
	URL, Method       string            // Method must be exactly GET, POST, PUT or DELETE when called
	Headers           map[string]string // added to every request
	Body              map[string]string // only the keys are used: they are the tool's parameters
}

// NewCustomHTTP returns a custom HTTP tool. The model sees an object
// schema with one required string property per key of c.Body ("The value
// for <k>"), in sorted key order; the body's values are never used.
//
// A call checks the method (anything but exactly GET, POST, PUT or DELETE
// is a *MethodError, "Unsupported HTTP method"), adds c.Headers, adds
// "Authorization: Bearer <opts.APIKey>" when opts.APIKey is not empty (as
// well as any Authorization of c.Headers), and for a method other than
// GET sends the arguments as a JSON object of strings (a non-string
// argument is an *ArgsError); a GET ignores the arguments and sends no
// query string. The result is the response body as text, whatever the
// status.
func NewCustomHTTP(c CustomHTTP, opts Options) *Tool {
	h := &httpc{client: opts.client()}
	keys := slices.Sorted(maps.Keys(c.Body))
	props := make(map[string]any, len(keys))
	for _, k := range keys {
		props[k] = prop("string", "The value for "+k)
	}
	headers := maps.Clone(c.Headers)
	key := opts.APIKey
	return &Tool{
		Def: llm.Tool{Name: c.Name, Description: c.Description, Parameters: schema(props, keys...)},
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			switch c.Method {
			case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete:
			default:
				return "", &MethodError{Tool: c.Name, Method: c.Method}
			}
			r := request{tool: c.Name, method: c.Method, url: c.URL, header: http.Header{}}
			for k, v := range headers {
				r.header.Add(k, v)
			}
			if key != "" {
				r.header.Add("Authorization", "Bearer "+key)
			}
			if c.Method != http.MethodGet {
				m, err := argsObject(c.Name, args)
				if err != nil {
					return "", err
				}
				body := make(map[string]string, len(m))
				for _, k := range slices.Sorted(maps.Keys(m)) {
					s, ok := str(m, k)
					if !ok {
						return "", &ArgsError{Tool: c.Name, Arg: k, Reason: "must be a string, got " + string(m[k])}
					}
					body[k] = s
				}
				r.body, r.jsonCT = []byte(mustJSON(body)), true
			}
			resp, err := h.do(ctx, r)
			if err != nil {
				return "", err
			}
			return resp.text(), nil
		},
	}
}

// NewCustomSchema returns a custom tool of mode "custom": the model sees
// parameters (a JSON Schema) verbatim, and every call fails with a
// *CustomModeError, "Custom mode can't execute tools, use
// function_calling_raw". Such a tool is meant for function_calling_raw,
// which returns the model's calls without running them.
func NewCustomSchema(name, description string, parameters json.RawMessage) *Tool {
	return &Tool{
		Def: llm.Tool{Name: name, Description: description, Parameters: parameters},
		Call: func(context.Context, json.RawMessage) (string, error) {
			return "", &CustomModeError{Tool: name}
		},
	}
}

package action

import (
	"fmt"
	"sync"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm/tokens"
)

// Functions returns the expression functions weft adds to flow's built-in
// ones, for flow.CompileOptions.Functions:
//
//	tokens(x) Int   the number of tokens of x (a String, or any value as its
//	                JSON text) in the cl100k_base encoding, as in seed 002's
//	                budget check: tokens(sql.result) > 500
//
// The encoding's vocabulary (100k entries, about 3.5 MB of heap and as
// much of the executable's read-only data to read) is loaded at the first
// call of tokens, not here: a server whose workflows never count tokens
// never holds it.
func Functions() (map[string]*flow.ExprFunc, error) {
	counter := sync.OnceValues(func() (*tokens.Counter, error) { return tokens.New("") })
	return map[string]*flow.ExprFunc{
		"tokens": {
			Doc: "tokens(x) Int: the token count of x",
			Min: 1, Max: 1,
			Result: func([]flow.Type) flow.Type { return flow.TInt },
			Call: func(args []flow.Value) (flow.Value, error) {
				c, err := counter()
				if err != nil {
					return flow.Null, fmt.Errorf("action: token counter: %w", err)
				}
				return flow.IntValue(int64(c.Count(args[0].Text()))), nil
			},
		},
	}, nil
}

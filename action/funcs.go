package action

import (
	"fmt"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm/tokens"
)

// Functions returns the expression functions weft adds to flow's built-in
// ones, for flow.CompileOptions.Functions:
//
//	tokens(x) Int   the number of tokens of x (a String, or any value as its
//	                JSON text) in the cl100k_base encoding, as in seed 002's
//	                budget check: tokens(sql.result) > 500
func Functions() (map[string]*flow.ExprFunc, error) {
	counter, err := tokens.New("")
	if err != nil {
		return nil, fmt.Errorf("action: token counter: %w", err)
	}
	return map[string]*flow.ExprFunc{
		"tokens": {
			Doc: "tokens(x) Int: the token count of x",
			Min: 1, Max: 1,
			Result: func([]flow.Type) flow.Type { return flow.TInt },
			Call: func(args []flow.Value) (flow.Value, error) {
				return flow.IntValue(int64(counter.Count(args[0].Text()))), nil
			},
		},
	}, nil
}

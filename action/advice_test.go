package action_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/flow"
)

// cliAdvice reports whether msg tells a user which command or flag to
// use, which a library error must leave to the program that prints it.
func cliAdvice(msg string) bool {
	return strings.Contains(msg, "--") || strings.Contains(msg, "weft ") || strings.Contains(msg, "WEFT_")
}

// TestNoProviderIsAKindWithoutCLIAdvice: a Binder with no model for an
// LLM binding fails with ErrNoProvider, whose text names no CLI flag.
func TestNoProviderIsAKindWithoutCLIAdvice(t *testing.T) {
	b := &action.Binder{}
	_, err := b.Bind(&flow.Binding{Name: "greet", Type: flow.LLM, Config: map[string]flow.Value{"prompt": flow.StringValue("hi")}})
	if !errors.Is(err, action.ErrNoProvider) {
		t.Fatalf("Bind without a model: %v; want ErrNoProvider", err)
	}
	if !strings.Contains(err.Error(), "greet") {
		t.Errorf("error %q does not name the action", err)
	}
	for _, e := range []error{err, action.ErrNoProvider} {
		if cliAdvice(e.Error()) {
			t.Errorf("error %q gives CLI advice", e)
		}
	}
}

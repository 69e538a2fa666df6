package owf

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestNoModelNoEmbedderAreKindsWithoutCLIAdvice: a task that needs a
// model or an embedder the Options lack fails with ErrNoModel or
// ErrNoEmbedder, whose text names no CLI flag.
func TestNoModelNoEmbedderAreKindsWithoutCLIAdvice(t *testing.T) {
	ctx := context.Background()
	x := &executor{opts: &Options{}}
	_, err := x.generation(ctx, &nodeSpec{}, nil)
	var te *TaskError
	if !errors.Is(err, ErrNoModel) || !errors.As(err, &te) || te.Kind != "GenerationFailed" {
		t.Errorf("generation without a model: %v; want a GenerationFailed *TaskError matching ErrNoModel", err)
	}
	_, err2 := x.embedAll(ctx, []string{"a"})
	if !errors.Is(err2, ErrNoEmbedder) {
		t.Errorf("embedding without an embedder: %v; want ErrNoEmbedder", err2)
	}
	for _, e := range []error{err, err2} {
		if e != nil && (strings.Contains(e.Error(), "--") || strings.Contains(e.Error(), "weft ")) {
			t.Errorf("error %q gives CLI advice", e)
		}
	}
}

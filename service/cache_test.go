package service

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/store/sqlite"
)

// The workflows a Service keeps are bounded; a thread whose workflow was
// dropped is resumed from the source in the store.
func TestWorkflowsKeptAreBounded(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := New(Options{Store: st, LeaseTTL: -1, WorkflowsKept: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ask, err := s.Open(ctx, Bytes("ask.wf", []byte(`workflow AskYear {
  nodes {
    node ask {
      type: HUMAN
      question: "Which fiscal year?"
      outputs { year: Int }
    }
  }
  initial: ask
  finals: [ ask ]
}
`)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(ctx, StartRequest{Workflow: ask, Thread: "a"}); err != nil {
		t.Fatal(err)
	}
	other, err := s.Open(ctx, Bytes("lib.wf", []byte(libWF)))
	if err != nil {
		t.Fatal(err)
	}
	if s.plans.get(ask.Digest) != nil || s.plans.get(other.Digest) == nil || len(s.plans.m) != 1 {
		t.Fatalf("kept %d workflows; ask kept: %v", len(s.plans.m), s.plans.get(ask.Digest) != nil)
	}
	res, err := s.Resume(ctx, ResumeRequest{Thread: "a", Answers: []Answer{{Text: "2024"}}})
	if err != nil || res.Status != engine.Completed || res.Output("year").Int() != 2024 {
		t.Fatalf("resume after the workflow was dropped: %v %+v", err, res)
	}
}

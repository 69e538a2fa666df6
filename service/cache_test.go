package service

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

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
	ask, err := s.Open(ctx, Bytes("ask.wf", []byte(askYear)))
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

// headCountingStore counts the reads of the head of a thread's log.
type headCountingStore struct {
	*sqlite.Store
	heads atomic.Int64
}

func (s *headCountingStore) Head(ctx context.Context, id string) (int64, time.Time, error) {
	s.heads.Add(1)
	return s.Store.Head(ctx, id)
}

// TestResumeTypesAnswersByTheStateGiven: a resume given the thread's
// state, as its caller just loaded it, types its answers by it without
// loading the state again; it ends as a resume without it does.
func TestResumeTypesAnswersByTheStateGiven(t *testing.T) {
	ctx := context.Background()
	sq, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	st := &headCountingStore{Store: sq}
	s, err := New(Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ask, err := s.Open(ctx, Bytes("ask.wf", []byte(askYear)))
	if err != nil {
		t.Fatal(err)
	}
	heads := map[bool]int64{}
	for _, given := range []bool{false, true} {
		id := fmt.Sprint("t-", given)
		if _, err := s.Start(ctx, StartRequest{Workflow: ask, Thread: id}); err != nil {
			t.Fatal(err)
		}
		req := ResumeRequest{Thread: id, Answers: []Answer{{Text: "2024"}}}
		if given {
			th := &engine.Threads{Store: st, Cache: s.StateCache()}
			if req.State, err = th.Load(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		before := st.heads.Load()
		res, err := s.Resume(ctx, req)
		if err != nil || res.Status != engine.Completed || res.Output("year").Int() != 2024 {
			t.Fatalf("resume (state given: %v): %v %+v", given, err, res)
		}
		heads[given] = st.heads.Load() - before
	}
	if heads[true] != heads[false]-1 {
		t.Errorf("reads of the log's head in a resume: %d given the state, %d without; want one less", heads[true], heads[false])
	}
}

// askYear asks one question with a typed (Int) answer (as the external
// tests' askYearWF).
const askYear = `workflow AskYear {
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
`

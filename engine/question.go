package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// QuestionID returns the id of the question a waiting task asks: the
// one id of a question everywhere, as Pending.ID, Answer.ID, the keys of
// Runner.Resume's answers and store.Pending.ID hold it. It is a string,
// the task's id in decimal today; treat it as opaque.
func (t *Task) QuestionID() string { return strconv.Itoa(t.ID) }

// QuestionError is an answer to a question the run does not ask.
type QuestionError struct {
	ID      string   // the id answered
	Waiting []string // the ids of the questions the run asks
}

// Error names the id answered and the ids asked.
func (e *QuestionError) Error() string {
	if len(e.Waiting) == 0 {
		return fmt.Sprintf("engine: no question %q waits; the run asks none", e.ID)
	}
	return fmt.Sprintf("engine: no question %q waits; the run asks %s", e.ID, strings.Join(e.Waiting, ", "))
}

// Is reports the mismatch kind: the answer does not fit the run.
func (e *QuestionError) Is(target error) bool { return target == ErrMismatch }

func (e *QuestionError) errorKind() Kind { return KindMismatch }

// questionError is the *QuestionError of an answer to id for m.
func questionError(m *Machine, id string) *QuestionError {
	e := &QuestionError{ID: id}
	for _, t := range m.Waiting() {
		e.Waiting = append(e.Waiting, t.QuestionID())
	}
	return e
}

// QuestionID returns the id of the question a waiting task asks, as
// (*Task).QuestionID does.
func (t TaskState) QuestionID() string { return strconv.Itoa(t.ID) }

package builtin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/wftest"
)

// Stubs is the config of action.stubs: actions answered from stub lists,
// as in workflow tests (package wftest), in place of the real actions of
// the same name. Give one of File and Stubs.
//
// Each stubbed name answers its calls with its replies in order, one a
// call: a name with N replies answers N calls, and the next call fails
// with a *wftest.ExhaustedError. A reply {"error": "message"} fails its
// call with a *wftest.StubError. For a node with no action (an LLM prompt
// written on the node) the name is the node's.
//
// RegisterActions replaces the actions of reg that have a stubbed name,
// so it must be called after the real actions are registered (the service
// calls action providers last). Every call of RegisterActions starts the
// lists afresh: each registry, that is each run, gets every reply.
type Stubs struct {
	// File is a stubs file, YAML (or JSON): a mapping with one key,
	// stubs, as wftest.LoadStubs reads. A relative path is relative to
	// the process's working directory; a spec meant to be stored should
	// hold an absolute one.
	File string `json:"file,omitempty"`
	// Stubs is the stub lists, inline: {"action": [{"output": value}]}.
	Stubs wftest.Stubs `json:"stubs,omitempty"`

	stubs wftest.Stubs // File's lists, or Stubs
}

// Provision reads File.
func (s *Stubs) Provision(_ context.Context, _ *component.Context) error {
	if (s.File == "") == (s.Stubs == nil) {
		return errors.New("give one of file and stubs")
	}
	if s.File == "" {
		s.stubs = s.Stubs
		return nil
	}
	st, err := wftest.LoadStubs(s.File)
	if err != nil {
		return fmt.Errorf("file: %w", err)
	}
	s.stubs = st
	return nil
}

// Validate checks the replies: an error reply's message is a string, and
// such a reply has no other key (a stubs file is checked as it is read).
func (s *Stubs) Validate() error {
	for _, name := range slices.Sorted(maps.Keys(s.Stubs)) {
		for i, reply := range s.Stubs[name] {
			ev, ok := reply["error"]
			if !ok {
				continue
			}
			if ev.Kind() != flow.KindString {
				return fmt.Errorf("stubs.%s[%d].error: an error reply's message must be a string, got %s", name, i, ev)
			}
			if len(reply) > 1 {
				return fmt.Errorf("stubs.%s[%d]: a reply with error fails the call and can have no other keys", name, i)
			}
		}
	}
	return nil
}

// Stubbed returns the stubbed names, sorted (for a caller that warns
// about names no node of its workflow calls).
func (s *Stubs) Stubbed() []string { return slices.Sorted(maps.Keys(s.stubs)) }

// RegisterActions puts a stub in reg for every stubbed name, replacing
// the action of that name if reg has one, with the lists full.
func (s *Stubs) RegisterActions(reg *engine.Registry) error {
	if s.stubs == nil {
		return errors.New("action.stubs: actions asked of a component that is not provisioned")
	}
	// Every reply a stub gives is the same value, to every registry:
	// values are immutable. An empty reply ([null] in JSON) sets nothing.
	lists := make(wftest.Stubs, len(s.stubs))
	for name, list := range s.stubs {
		l := make([]map[string]flow.Value, len(list))
		for i, r := range list {
			if r == nil {
				r = map[string]flow.Value{}
			}
			l[i] = r
		}
		lists[name] = l
	}
	sreg, _ := wftest.NewStubRegistry(nil, lists)
	for _, name := range sreg.Names() {
		a, _ := sreg.Lookup(name)
		reg.Replace(name, a)
	}
	return nil
}

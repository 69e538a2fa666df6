package main

import (
	"testing"

	"github.com/weftlang/weft/llm/llmtest"
)

// The recorded session of examples/owf: the README tour's ollama-workflows
// document, replayed offline. The model's replies are scripted.
func owfSessions() []session {
	return []session{{
		example: "owf", name: "tallest", file: "workflow.json",
		input: "What is the tallest mountain?",
		script: []llmtest.Reply{
			llmtest.Text("Mount Everest, in the Himalaya on the border of Nepal and China, is the tallest mountain above sea level at 8,849 metres."),
			llmtest.Text("Mount Everest is the tallest mountain, at 8,849 metres."),
		},
		path:    []string{"__start", "answer", "condense", "__return"},
		outputs: map[string]string{"result": "Mount Everest is the tallest mountain, at 8,849 metres."},
	}}
}

func TestOWFSessions(t *testing.T) { runSessions(t, owfSessions()) }

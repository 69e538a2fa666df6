package viz

import "fmt"

// intentQA is the graph of the IntentQA seed workflow.
func intentQA() *Graph {
	return &Graph{
		Name: "IntentQA",
		Nodes: []Node{
			{ID: "identify_intent", Label: "identify_intent", Detail: "identify_user_intent", Kind: Task, Initial: true},
			{ID: "ask_user", Label: "ask_user", Detail: "ask_user", Kind: Human},
			{ID: "retrieve", Label: "retrieve", Detail: "retrieve_financial_documents", Kind: Task},
			{ID: "evaluate", Label: "evaluate", Detail: "evaluate_relevance", Kind: Task},
			{ID: "rephrase", Label: "rephrase", Detail: "rephrase_query", Kind: Task},
			{ID: "summarize", Label: "summarize", Detail: "summarize", Kind: Task},
			{ID: "generate", Label: "generate", Detail: "generate_answer", Kind: Task, Final: true},
		},
		Edges: []Edge{
			{From: "identify_intent", To: "retrieve", Kind: Conditional, Label: `intent == "qa"`, Note: "from_query := identify_intent.input_text"},
			{From: "identify_intent", To: "summarize", Kind: Conditional, Label: `intent == "summarization"`, Note: "original_query := identify_intent.input_text"},
			{From: "identify_intent", To: "ask_user", Kind: Conditional, Label: `intent == "not_clear"`},
			{From: "ask_user", To: "retrieve", Kind: Default, Note: "from_query := ask_user.query"},
			{From: "retrieve", To: "evaluate"},
			{From: "summarize", To: "generate", Note: "result_source := summarize.summary"},
			{From: "evaluate", To: "generate", Kind: Conditional, Label: `relevance == "OK"`, Note: "result_source := evaluate.chunks"},
			{From: "evaluate", To: "rephrase", Kind: Conditional, Label: `relevance == "BAD" && rephraseCount < 3`, Note: "rephraseCount = rephraseCount + 1; from_query := retrieve.query"},
			{From: "evaluate", To: "generate", Kind: Error, Label: `relevance == "BAD" && rephraseCount >= 3`, Note: `result_source := "ERROR: no relevant chunks after retries"`},
			{From: "rephrase", To: "retrieve", Note: "from_query := rephrase.new_query"},
		},
	}
}

// fanOut is start -> n parallel branches -> join -> end.
func fanOut(n int) *Graph {
	g := &Graph{Name: fmt.Sprintf("fan-out %d", n)}
	g.Nodes = append(g.Nodes, Node{ID: "start", Detail: "split_work", Initial: true})
	for i := range n {
		id := fmt.Sprintf("branch_%d", i+1)
		g.Nodes = append(g.Nodes, Node{ID: id, Detail: "LLM", Kind: LLM})
		g.Edges = append(g.Edges, Edge{From: "start", To: id, Kind: Parallel})
		g.Edges = append(g.Edges, Edge{From: id, To: "join"})
	}
	g.Nodes = append(g.Nodes, Node{ID: "join", Detail: "merge_results", Kind: Join}, Node{ID: "end", Detail: "report", Final: true})
	g.Edges = append(g.Edges, Edge{From: "join", To: "end"})
	return g
}

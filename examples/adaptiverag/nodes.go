package adaptiverag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/weftlang/weft/examples/internal/modelcall"
	"log/slog"
	"slices"
	"strings"
)

// Fallback values of the nodes, used when their LLM or retriever call
// fails: the run goes on as for an answerable question.
const (
	// FallbackIntent and FallbackRelevance are classify_intent's values
	// when the LLM fails: the question is treated as a simple question
	// in the domain rather than refused.
	FallbackIntent    = SimpleQA
	FallbackRelevance = 0.5
	// NoDocumentsAnswer is the answer when retrieval found nothing; no
	// LLM is called then.
	NoDocumentsAnswer = "I could not find anything about that in the documents."
	// FallbackClarification is clarify's question when the LLM fails.
	FallbackClarification = "Could you be more specific: which company, which figure and which year do you mean?"
)

// nodes holds the settings every node reads: the seed's partial-bound
// dependencies.
type nodes struct {
	s    *settings
	log  *slog.Logger
	call *modelcall.Caller
}

// enter logs the node's ---NAME--- line, as the seed's nodes do.
func (n *nodes) enter(ctx context.Context, node string) {
	n.log.InfoContext(ctx, "---"+strings.ToUpper(node)+"---")
}

// fellBack logs err and returns the turn's errors with it added, for the
// node's update.
func (n *nodes) fellBack(ctx context.Context, s State, node string, err error) *[]string {
	n.log.WarnContext(ctx, "node failed; using fallback values", slog.String("node", node), slog.Any("error", err))
	errs := append(slices.Clip(s.Errors), node+": "+err.Error())
	return &errs
}

// stopped reports whether the run itself is being stopped (its context
// is done), in which case a node returns the error instead of falling
// back.
func stopped(ctx context.Context) error { return context.Cause(ctx) }

func (n *nodes) history(s State) string {
	return FormatHistory(s.Messages, s.Question, n.s.HistoryTurns)
}

func clamp01(f float64) float64 { return min(max(f, 0), 1) }

// classifyIntent is classify_intent: the fast patterns, then the LLM, then
// the domain-relevance override.
func (n *nodes) classifyIntent(ctx context.Context, s State) (IntentUpdate, error) {
	const node = "classify_intent"
	n.enter(ctx, node)
	up := IntentUpdate{Messages: Message{Role: RoleHuman, Content: s.Question}}
	q := strings.TrimSpace(s.Question)
	if q == "" {
		up.Intent, up.ClassifiedBy = OutOfDomain, "empty"
		return up, nil
	}
	if p, ok := n.s.matchOOD(q); ok {
		up.Intent, up.ClassifiedBy = OutOfDomain, "pattern:"+p.Name
		n.log.InfoContext(ctx, "out of domain by pattern", slog.String("pattern", p.Name))
		return up, nil
	}
	system, user := n.s.intentPrompt(q, n.history(s))
	vals, err := n.call.Ask(ctx, n.call.Request(system, user), intentFields())
	if err != nil {
		if cerr := stopped(ctx); cerr != nil {
			return up, cerr
		}
		up.Intent, up.DomainRelevance, up.ClassifiedBy = FallbackIntent, FallbackRelevance, "fallback"
		up.Errors = n.fellBack(ctx, s, node, err)
		return up, nil
	}
	up.Intent, up.DomainRelevance, up.ClassifiedBy = Intent(vals["intent"].Str()), clamp01(vals["domain_relevance"].Float()), "llm"
	if up.DomainRelevance < RelevanceThreshold && up.Intent != OutOfDomain {
		n.log.InfoContext(ctx, "low domain relevance overrides the intent",
			slog.String("intent", string(up.Intent)), slog.Float64("domain_relevance", up.DomainRelevance))
		up.Intent = OutOfDomain
	}
	n.log.DebugContext(ctx, "intent", slog.String("intent", string(up.Intent)), slog.Float64("domain_relevance", up.DomainRelevance))
	return up, nil
}

// yearRange bounds the years query analysis may filter on.
const minYear, maxYear = 1900, 2100

// analyzeQuery is analyze_query: quality, alternative queries, filters.
func (n *nodes) analyzeQuery(ctx context.Context, s State) (QueryAnalysisUpdate, error) {
	const node = "analyze_query"
	n.enter(ctx, node)
	q := strings.TrimSpace(s.Question)
	// The fallback: the question searched as is, at the clarification
	// threshold (so it is not sent back to the user), without filters.
	up := QueryAnalysisUpdate{QueryQuality: max(n.s.MinQueryQuality, 0), Queries: []string{q}}
	system, user := n.s.queryPrompt(q, n.history(s))
	vals, err := n.call.Ask(ctx, n.call.Request(system, user), queryFields())
	if err != nil {
		if cerr := stopped(ctx); cerr != nil {
			return up, cerr
		}
		up.Errors = n.fellBack(ctx, s, node, err)
		return up, nil
	}
	up.QueryQuality = clamp01(vals["query_quality"].Float())
	seen := map[string]bool{strings.ToLower(q): true}
	for _, v := range vals["queries"].List() {
		if len(up.Queries) > n.s.MaxQueries {
			break
		}
		alt := strings.TrimSpace(v.Str())
		if key := strings.ToLower(alt); alt != "" && !seen[key] {
			seen[key] = true
			up.Queries = append(up.Queries, alt)
		}
	}
	up.Filters.Company = strings.TrimSpace(vals["company"].Str())
	if y := int(vals["year"].Int()); y >= minYear && y <= maxYear {
		up.Filters.Year = y
	}
	n.log.DebugContext(ctx, "query analysis", slog.Float64("query_quality", up.QueryQuality),
		slog.Any("queries", up.Queries), slog.Any("filters", up.Filters))
	return up, nil
}

// retrieve searches every query with the filters, deduplicates, and falls
// back to searches without filters when the filtered ones find nothing.
func (n *nodes) retrieve(ctx context.Context, s State) (RetrievalUpdate, error) {
	const node = "retrieve"
	n.enter(ctx, node)
	queries := s.Queries
	if len(queries) == 0 {
		queries = []string{s.Question}
	}
	var errs []error
	search := func(f Filters) []Passage {
		var out []Passage
		at := map[string]int{} // passage key -> index in out
		for _, q := range queries {
			cctx, cancel := n.call.Context(ctx)
			res, err := n.s.Retriever.Search(cctx, q, f, n.s.SearchK)
			cancel()
			if err != nil {
				errs = append(errs, fmt.Errorf("search %q: %w", q, err))
				continue
			}
			for _, p := range res {
				key := p.ID
				if key == "" {
					key = "text:" + p.Text
				}
				if i, ok := at[key]; ok {
					out[i].Score = max(out[i].Score, p.Score)
					continue
				}
				at[key] = len(out)
				out = append(out, p)
			}
		}
		slices.SortStableFunc(out, func(a, b Passage) int { return cmp.Compare(b.Score, a.Score) })
		return out
	}
	docs := search(s.Filters)
	fallback := false
	if len(docs) == 0 && !s.Filters.IsZero() {
		n.log.InfoContext(ctx, "filtered search found nothing; searching without filters", slog.Any("filters", s.Filters))
		fallback = true
		docs = search(Filters{})
	}
	if docs == nil {
		docs = []Passage{}
	}
	up := RetrievalUpdate{Documents: &docs, FallbackSearch: &fallback}
	if err := errors.Join(errs...); err != nil {
		if cerr := stopped(ctx); cerr != nil {
			return up, cerr
		}
		up.Errors = n.fellBack(ctx, s, node, err)
	}
	n.log.DebugContext(ctx, "retrieved", slog.Int("documents", len(docs)), slog.Bool("fallback_search", fallback))
	return up, nil
}

// rerank orders the documents with the Reranker and keeps the best TopK;
// on failure it keeps the retrieval order.
func (n *nodes) rerank(ctx context.Context, s State) (RetrievalUpdate, error) {
	const node = "rerank"
	n.enter(ctx, node)
	docs := s.Documents
	if len(docs) == 0 {
		none := []Passage{}
		return RetrievalUpdate{RerankedDocuments: &none}, nil
	}
	// The question and its rewrites: a follow-up's standalone form
	// carries the terms the question leaves implicit.
	query := strings.Join(append([]string{s.Question}, s.Queries...), "\n")
	cctx, cancel := n.call.Context(ctx)
	out, err := n.s.Reranker.Rerank(cctx, query, docs, n.s.TopK)
	cancel()
	if err != nil {
		if cerr := stopped(ctx); cerr != nil {
			return RetrievalUpdate{}, cerr
		}
		out = slices.Clone(docs[:min(len(docs), n.s.TopK)])
		return RetrievalUpdate{RerankedDocuments: &out, Errors: n.fellBack(ctx, s, node, err)}, nil
	}
	if out == nil {
		out = []Passage{}
	}
	return RetrievalUpdate{RerankedDocuments: &out}, nil
}

// generateAnswer is generate_answer: the intent's strategy and effort, a
// plain (not structured) call with the history and the documents.
func (n *nodes) generateAnswer(ctx context.Context, s State) (AnswerUpdate, error) {
	const node = "generate_answer"
	n.enter(ctx, node)
	st := StrategyFor(s.Intent)
	up := AnswerUpdate{Strategy: st.Name, ReasoningEffort: string(st.Effort)}
	docs := s.RerankedDocuments
	if len(docs) == 0 {
		up.Answer = NoDocumentsAnswer
		up.Messages = Message{Role: RoleAI, Content: up.Answer}
		return up, nil
	}
	system, user := n.s.answerPrompt(st, s.Question, n.history(s), docs)
	req := n.call.Request(system, user)
	req.Effort = st.Effort
	answer, err := n.call.Chat(ctx, req)
	if err != nil {
		if cerr := stopped(ctx); cerr != nil {
			return up, cerr
		}
		up.Errors = n.fellBack(ctx, s, node, err)
		answer = fallbackAnswer(docs)
	}
	up.Answer = answer
	up.Messages = Message{Role: RoleAI, Content: answer}
	return up, nil
}

// fallbackAnswer shows the best passages when no answer could be
// generated.
func fallbackAnswer(docs []Passage) string {
	var b strings.Builder
	b.WriteString("I could not generate an answer just now. The most relevant passages are:")
	for i, d := range docs[:min(len(docs), 3)] {
		text := strings.TrimSpace(d.Text)
		if r := []rune(text); len(r) > 300 {
			text = string(r[:300]) + "…"
		}
		fmt.Fprintf(&b, "\n[%d] %s%s", i+1, docLabel(d), text)
	}
	return b.String()
}

// generateOODResponse is generate_ood_response: a fixed, polite refusal
// (a greeting gets a greeting), with no LLM call.
func (n *nodes) generateOODResponse(ctx context.Context, s State) (OODResponseUpdate, error) {
	n.enter(ctx, "generate_ood_response")
	reply := n.s.oodReply(s.ClassifiedBy)
	return OODResponseUpdate{Answer: reply, Messages: Message{Role: RoleAI, Content: reply}}, nil
}

// clarify asks the user a clarifying question.
func (n *nodes) clarify(ctx context.Context, s State) (ClarifyUpdate, error) {
	const node = "clarify"
	n.enter(ctx, node)
	system, user := n.s.clarifyPrompt(s.Question, n.history(s))
	var up ClarifyUpdate
	text, err := n.call.Chat(ctx, n.call.Request(system, user))
	if err != nil {
		if cerr := stopped(ctx); cerr != nil {
			return up, cerr
		}
		up.Errors = n.fellBack(ctx, s, node, err)
		text = FallbackClarification
	}
	up.Clarification = text
	up.Messages = Message{Role: RoleAI, Content: text}
	return up, nil
}

// finalize sets the response the user is shown: the clarifying question,
// or the answer followed by the IDs of the passages it was generated
// from, numbered as its citations.
func (n *nodes) finalize(ctx context.Context, s State) (FinalizeUpdate, error) {
	n.enter(ctx, "finalize")
	switch {
	case s.Clarification != "":
		return FinalizeUpdate{FinalResponse: s.Clarification}, nil
	case s.Answer == "":
		return FinalizeUpdate{FinalResponse: "Sorry, I could not answer that."}, nil
	}
	resp := s.Answer
	if len(s.RerankedDocuments) > 0 {
		var src []string
		for i, d := range s.RerankedDocuments {
			src = append(src, fmt.Sprintf("[%d] %s", i+1, cmp.Or(d.ID, d.Source)))
		}
		resp += "\n\nSources: " + strings.Join(src, "; ")
	}
	return FinalizeUpdate{FinalResponse: resp}, nil
}

package shipments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weftlang/weft/examples/internal/modelcall"
	"log/slog"
	"slices"
	"strings"

	"github.com/weftlang/weft/examples/shipments/dataset"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/search"
)

// The fixed replies of the nodes that need no model.
const (
	// EmptyQuestionReply answers an empty message.
	EmptyQuestionReply = `Please ask me about shipments, for example "Show me Maersk shipments to Los Angeles" or "delayed reefer shipments to Rotterdam last month".`
	// NothingToContinueReply answers "show me more" when no earlier turn
	// ran a search.
	NothingToContinueReply = "There is no earlier search in this conversation to continue. What shipments should I look for? You can name a shipper, consignee, carrier, port, goods, status or dates."
	// DefaultClarification is asked when a request names no criterion and
	// the model gave no question of its own.
	DefaultClarification = "Which shipments do you mean? Give me a shipper, consignee, carrier, port or country, goods, status or dates."
	// ExtractionFailedReply is the reply when the model could not extract
	// a search from the request.
	ExtractionFailedReply = "I could not work out what to search for just now. Could you rephrase it, naming a carrier, a port, the goods or dates?"
	// NoResponseReply is recorded when a turn ended without a response.
	NoResponseReply = "Sorry, I could not answer that."
)

// nodes holds the settings every node reads.
type nodes struct {
	s    *settings
	log  *slog.Logger
	call *modelcall.Caller
}

// enter logs the node's id and name as it starts.
func (n *nodes) enter(ctx context.Context, node string, attrs ...any) {
	id := NodeIDs()[node]
	n.log.InfoContext(ctx, id+" "+node, append([]any{slog.String("node_id", id), slog.String("node", node)}, attrs...)...)
}

// failed logs err (at level) and returns the turn's errors with it added.
func (n *nodes) failed(ctx context.Context, level slog.Level, s State, node string, err error) *[]string {
	n.log.Log(ctx, level, "node failed; falling back", slog.String("node_id", NodeIDs()[node]), slog.String("node", node), slog.Any("error", err))
	errs := append(slices.Clip(s.Errors), node+": "+err.Error())
	return &errs
}

// warned returns the turn's warnings with ws added, or nil when ws is
// empty.
func (n *nodes) warned(ctx context.Context, s State, node string, ws []string) *[]string {
	if len(ws) == 0 {
		return nil
	}
	for _, w := range ws {
		n.log.WarnContext(ctx, w, slog.String("node_id", NodeIDs()[node]), slog.String("node", node))
	}
	out := slices.Clip(s.Warnings)
	for _, w := range ws {
		out = append(out, node+": "+w)
	}
	return &out
}

// stopped reports whether the run itself is being stopped (its context is
// done): a node then returns the error instead of falling back.
func stopped(ctx context.Context) error { return context.Cause(ctx) }

// reiterateCall is F01's model call: the ReiterateResult of question given
// the history (its last HistoryTurns turns), and warnings about the reply.
// It returns an error when the call failed or no reply matched the schema.
func (n *nodes) reiterateCall(ctx context.Context, question string, history []TurnSummary) (ReiterateResult, []string, error) {
	h, err := FormatHistory(history)
	if err != nil {
		return ReiterateResult{}, nil, fmt.Errorf("formatting the history: %w", err)
	}
	vals, err := n.call.Ask(ctx, n.call.Request(reiterateSystem, reiterateUser(question, h)), ReiterateFields())
	if err != nil {
		return ReiterateResult{}, nil, err
	}
	r := ReiterateResult{
		MainGoal:               vals["main_goal"].Str(),
		Reasoning:              vals["reasoning"].Str(),
		ReferencesPriorResults: vals["references_prior_results"].Bool(),
		ForceExecute:           vals["force_execute"].Bool(),
	}
	var warnings []string
	switch uq := vals["user_query_text"]; uq.Kind() {
	case flow.KindNull:
	case flow.KindString:
		text := uq.Str()
		r.UserQueryText = &text
	case flow.KindObject, flow.KindList:
		b, err := json.Marshal(uq)
		if err == nil {
			text := string(b)
			r.UserQueryText = &text
		}
	default:
		warnings = append(warnings, fmt.Sprintf("user_query_text is %s, not a string or null: ignored", uq.Kind()))
	}
	return r, warnings, nil
}

// reiterate is F01, Reiterate Intention: the main goal and the context
// slots, once per turn, at entry.
func (n *nodes) reiterate(ctx context.Context, s State) (ReiterateUpdate, error) {
	const node = NodeReiterate
	n.enter(ctx, node)
	if strings.TrimSpace(s.Question) == "" {
		n.log.WarnContext(ctx, "F01: the question is empty; state unchanged", slog.String("node_id", "F01"), slog.String("node", node))
		return ReiterateUpdate{}, nil
	}
	r, warnings, err := n.reiterateCall(ctx, s.Question, s.ConversationHistory)
	if err != nil {
		if cerr := stopped(ctx); cerr != nil {
			return ReiterateUpdate{}, cerr
		}
		// The seed: state unchanged, the original question preserved; the
		// error is logged and recorded.
		return ReiterateUpdate{Errors: n.failed(ctx, slog.LevelError, s, node, err)}, nil
	}
	for _, w := range warnings {
		n.log.WarnContext(ctx, w, slog.String("node_id", "F01"), slog.String("node", node))
	}
	goal := strings.TrimSpace(r.MainGoal)
	if goal == "" {
		n.log.WarnContext(ctx, "F01: empty main_goal; keeping the question", slog.String("node_id", "F01"), slog.String("node", node))
		goal = s.Question
	}
	slots := ContextSlots(r, s.ConversationHistory)
	completed := withOutputs(s.CompletedOutputs, ContextSubGoal, slots)
	user := s.Question
	n.log.DebugContext(ctx, "F01: main goal", slog.String("main_goal", goal), slog.String("reasoning", r.Reasoning),
		slog.Bool("references_prior_results", r.ReferencesPriorResults), slog.Bool("force_execute", r.ForceExecute),
		slog.Any("completed_outputs[0]", slots))
	return ReiterateUpdate{
		Question:               &goal,
		UserMessage:            &user,
		MainGoal:               &goal,
		Reasoning:              &r.Reasoning,
		ReferencesPriorResults: &r.ReferencesPriorResults,
		CompletedOutputs:       &completed,
	}, nil
}

// plan is F02: the next round's task (Plan).
func (n *nodes) plan(ctx context.Context, s State) (PlanUpdate, error) {
	round := s.Round + 1
	n.enter(ctx, NodePlan, slog.Int("round", round))
	if round == 1 {
		n.log.DebugContext(ctx, "F02: F01 context", slog.String("flags", ContextFlags(s.CompletedOutputs, round).String()))
	}
	t := Plan(s, n.s.MaxRounds)
	if t.Reason == ReasonMaxRounds {
		n.log.WarnContext(ctx, "F02: too many rounds; ending the turn", slog.Int("round", round))
	}
	n.log.DebugContext(ctx, "F02: task", slog.String("worker", t.Worker), slog.Int("sub_goal", t.SubGoal),
		slog.Int("input", t.Input), slog.Bool("force_execute", t.ForceExecute), slog.String("reason", t.Reason))
	return PlanUpdate{Round: round, Task: t}, nil
}

// parseQuery parses the query the user pasted (F01's user_es_query slot).
func (n *nodes) parseQuery(ctx context.Context, s State) (ParseUpdate, error) {
	const node = NodeParseQuery
	n.enter(ctx, node)
	t := s.Task
	text, _ := s.CompletedOutputs[t.Input].String(SlotUserESQuery)
	body, from, size, err := ParseUserQuery(text)
	if err != nil {
		slots := Slots{SlotError: err.Error()}
		var qe *QueryTextError
		if errors.As(err, &qe) && qe.Syntax != nil {
			slots[SlotOffset] = int(qe.Syntax.Offset)
		}
		n.log.InfoContext(ctx, "the pasted query cannot be run", slog.String("node", node), slog.Any("error", err))
		resp := "I did not run that query: " + err.Error() + "." + excerpt(text, slots)
		return ParseUpdate{CompletedOutputs: withOutputs(s.CompletedOutputs, t.SubGoal, slots), Response: &resp}, nil
	}
	slots := Slots{SlotQuery: body, SlotFrom: from, SlotPageSize: PageSizeOf(size, n.s.PageSize)}
	return ParseUpdate{CompletedOutputs: withOutputs(s.CompletedOutputs, t.SubGoal, slots)}, nil
}

// excerpt shows where in text a syntax error is, when slots has its
// offset.
func excerpt(text string, slots Slots) string {
	off, ok := slots.Int(SlotOffset)
	if !ok || off < 0 || off > len(text) {
		return ""
	}
	lo, hi := max(off-30, 0), min(off+10, len(text))
	before, after := strings.ReplaceAll(text[lo:off], "\n", " "), strings.ReplaceAll(text[off:hi], "\n", " ")
	return fmt.Sprintf(" The problem is here: %s<<HERE>>%s", before, after)
}

// buildQuery is F06: the model extracts a SearchIntent, BuildQuery turns
// it into a query. No criterion and no force_execute: a clarification.
func (n *nodes) buildQuery(ctx context.Context, s State) (BuildUpdate, error) {
	const node = NodeBuildQuery
	n.enter(ctx, node, slog.Bool("force_execute", s.Task.ForceExecute))
	t := s.Task
	var up BuildUpdate
	h, err := FormatHistory(s.ConversationHistory)
	var intent SearchIntent
	if err == nil {
		var vals map[string]flow.Value
		vals, err = n.call.Ask(ctx, n.call.Request(intentSystem(n.s.Now()), intentUser(s.Question, h)), IntentFields())
		if err == nil {
			intent = intentFromValues(vals)
			up.SearchIntent = &intent
		}
	}
	if err != nil {
		if cerr := stopped(ctx); cerr != nil {
			return up, cerr
		}
		up.Errors = n.failed(ctx, slog.LevelWarn, s, node, err)
		if !t.ForceExecute {
			up.CompletedOutputs = withOutputs(s.CompletedOutputs, t.SubGoal, Slots{SlotError: err.Error()})
			return up, nil
		}
		// force_execute: no question back; run everything.
	}
	if !intent.HasCriteria() && !t.ForceExecute {
		q := intent.Clarification
		if q == "" {
			q = DefaultClarification
		}
		n.log.DebugContext(ctx, "F06: no criterion; clarification", slog.String("question", q))
		up.CompletedOutputs = withOutputs(s.CompletedOutputs, t.SubGoal, Slots{SlotClarify: q})
		return up, nil
	}
	body, warnings := BuildQuery(intent)
	size := PageSizeOf(intent.PageSize, n.s.PageSize)
	if intent.PageSize > MaxPageSize {
		warnings = append(warnings, fmt.Sprintf("page size %d capped at %d", intent.PageSize, MaxPageSize))
	}
	up.Warnings = n.warned(ctx, s, node, warnings)
	n.log.DebugContext(ctx, "F06: query built", slog.Any("criteria", intent.Criteria()), slog.Int("page_size", size))
	up.CompletedOutputs = withOutputs(s.CompletedOutputs, t.SubGoal, Slots{
		SlotQuery:    body,
		SlotFrom:     0,
		SlotPageSize: size,
		SlotCriteria: strings.Join(intent.Criteria(), ", "),
	})
	return up, nil
}

// execute is F07: it runs one page of the query of the task's input
// sub-goal: F01's prior_es_query at prior_next_offset with
// prior_page_size, or a parsed or built query at its from and page size.
func (n *nodes) execute(ctx context.Context, s State) (ExecuteUpdate, error) {
	const node = NodeExecute
	n.enter(ctx, node)
	t := s.Task
	in := s.CompletedOutputs[t.Input]
	var (
		query      map[string]any
		from, size int
		ok         bool
	)
	if t.Input == ContextSubGoal {
		query, ok = in.Object(SlotPriorESQuery)
		from, _ = in.Int(SlotPriorNextOffset)
		size, _ = in.Int(SlotPriorPageSize)
	} else {
		query, ok = in.Object(SlotQuery)
		from, _ = in.Int(SlotFrom)
		size, _ = in.Int(SlotPageSize)
	}
	size = PageSizeOf(size, n.s.PageSize)
	from = max(from, 0)
	fail := func(up ExecuteUpdate, text string) (ExecuteUpdate, error) {
		resp := "I could not run the search: " + text + "."
		up.CompletedOutputs = withOutputs(s.CompletedOutputs, t.SubGoal, Slots{SlotError: text})
		up.Response = &resp
		return up, nil
	}
	if !ok {
		return fail(ExecuteUpdate{}, fmt.Sprintf("sub-goal %d holds no query", t.Input))
	}
	query = stripPage(query)
	var warnings []string
	if from+size > search.MaxResultWindow {
		if from >= search.MaxResultWindow {
			return fail(ExecuteUpdate{}, fmt.Sprintf("only the first %d results can be paged through; narrow the search", search.MaxResultWindow))
		}
		size = search.MaxResultWindow - from
		warnings = append(warnings, fmt.Sprintf("page cut to %d to stay within the first %d results", size, search.MaxResultWindow))
	}
	body := WithPage(query, from, size)
	up := ExecuteUpdate{ESQuery: body, Warnings: n.warned(ctx, s, node, warnings)}
	raw, err := json.Marshal(body)
	if err != nil {
		return fail(up, "the query does not encode as JSON: "+err.Error())
	}
	n.log.DebugContext(ctx, "F07: search", slog.String("index", n.s.Index), slog.String("body", string(raw)))
	cctx, cancel := n.call.Context(ctx)
	res, err := n.s.Backend.Search(cctx, n.s.Index, raw)
	cancel()
	if err != nil {
		if cerr := stopped(ctx); cerr != nil {
			return up, cerr
		}
		up.Errors = n.failed(ctx, slog.LevelWarn, s, node, err)
		return fail(up, SearchErrorText(err))
	}
	page := &Page{Total: res.Total, TotalRelation: res.TotalRelation, From: from, Size: size, NextOffset: from + size,
		Hits: make([]dataset.Shipment, 0, len(res.Hits))}
	var bad []string
	for _, h := range res.Hits {
		var sh dataset.Shipment
		if len(h.Source) > 0 {
			if err := json.Unmarshal(h.Source, &sh); err != nil {
				bad = append(bad, h.ID)
			}
		}
		if sh.ShipmentID == "" {
			sh.ShipmentID = h.ID
		}
		page.Hits = append(page.Hits, sh)
	}
	if len(bad) > 0 {
		up.Warnings = n.warned(ctx, s, node, append(warnings, fmt.Sprintf("the sources of %s are not shipments", strings.Join(bad, ", "))))
	}
	n.log.DebugContext(ctx, "F07: page", slog.Int64("total", page.Total), slog.Int("from", from), slog.Int("returned", len(page.Hits)))
	up.Page = page
	up.CompletedOutputs = withOutputs(s.CompletedOutputs, t.SubGoal, Slots{
		SlotQuery:      query,
		SlotFrom:       from,
		SlotPageSize:   size,
		SlotNextOffset: page.NextOffset,
		SlotTotal:      page.Total,
		SlotReturned:   len(page.Hits),
	})
	return up, nil
}

// stripPage returns query without from and size.
func stripPage(query map[string]any) map[string]any {
	out, _ := cloneJSON(query).(map[string]any)
	delete(out, "from")
	delete(out, "size")
	return out
}

// summarize writes the turn's response: the counts (computed here), the
// model's summary of the page, and where the next page starts. Past the
// end of the results it says so without calling the model.
func (n *nodes) summarize(ctx context.Context, s State) (ReplyUpdate, error) {
	const node = NodeSummarize
	n.enter(ctx, node)
	t := s.Task
	p := s.Page
	up := ReplyUpdate{}
	done := func(resp string) (ReplyUpdate, error) {
		up.Response = resp
		up.CompletedOutputs = withOutputs(s.CompletedOutputs, t.SubGoal, Slots{SlotResponse: resp})
		return up, nil
	}
	if p == nil {
		return done(NoResponseReply)
	}
	if len(p.Hits) == 0 && p.From > 0 {
		return done(PastTheEnd(p))
	}
	summary, err := n.call.Chat(ctx, n.call.Request(summarizeSystem, summarizeUser(s.Question, p)))
	if err != nil {
		if cerr := stopped(ctx); cerr != nil {
			return up, cerr
		}
		up.Errors = n.failed(ctx, slog.LevelWarn, s, node, err)
		summary = ""
	}
	return done(ComposeResponse(p, summary))
}

// PastTheEnd is the response to a page that starts after the last result.
func PastTheEnd(p *Page) string {
	if p.Total >= 0 {
		return fmt.Sprintf("No more results: the search matched %s shipments and all of them have been shown.", totalText(p))
	}
	return "No more results: every shipment the search matched has been shown."
}

// ComposeResponse is the response for a page: a header with the counts,
// the model's summary (when there is one), and a footer saying whether
// there are more.
func ComposeResponse(p *Page, summary string) string {
	var parts []string
	switch {
	case p.Total == 0:
		parts = append(parts, "No shipments matched.")
	case len(p.Hits) == 0:
		parts = append(parts, fmt.Sprintf("Found %s shipments.", totalText(p)))
	default:
		parts = append(parts, fmt.Sprintf("Found %s shipments; showing %d-%d.", totalText(p), p.From+1, p.From+len(p.Hits)))
	}
	if summary = strings.TrimSpace(summary); summary != "" {
		parts = append(parts, summary)
	}
	switch {
	case p.More():
		parts = append(parts, fmt.Sprintf("Say \"show me more\" for the next %d.", p.Size))
	case p.Total > 0 && len(p.Hits) > 0:
		parts = append(parts, "That is the last page.")
	}
	return strings.Join(parts, "\n\n")
}

// clarify writes a clarifying question (or says there is nothing to
// continue) as the turn's response, without a model call.
func (n *nodes) clarify(ctx context.Context, s State) (ReplyUpdate, error) {
	const node = NodeClarify
	t := s.Task
	n.enter(ctx, node, slog.String("reason", t.Reason))
	var resp string
	switch t.Reason {
	case ReasonEmptyQuestion:
		resp = EmptyQuestionReply
	case ReasonNothingToContinue:
		resp = NothingToContinueReply
	case ReasonExtractionFailed:
		resp = ExtractionFailedReply
	default:
		resp, _ = s.CompletedOutputs[t.Input].String(SlotClarify)
		if strings.TrimSpace(resp) == "" {
			resp = DefaultClarification
		}
	}
	return ReplyUpdate{Response: resp, CompletedOutputs: withOutputs(s.CompletedOutputs, t.SubGoal, Slots{SlotResponse: resp})}, nil
}

// recordTurn appends the turn to the conversation history: the user's
// message, the response, and, when a search ran, its es_query artifact
// {query, next_offset, page_size, total} for the next turn's F01.
func (n *nodes) recordTurn(ctx context.Context, s State) (RecordUpdate, error) {
	n.enter(ctx, NodeRecordTurn, slog.String("reason", s.Task.Reason))
	turn := TurnSummary{Question: s.UserMessage, Response: s.Response, KeyArtifacts: []KeyArtifact{}}
	if turn.Question == "" {
		turn.Question = s.Question
	}
	if strings.TrimSpace(turn.Response) == "" {
		turn.Response = NoResponseReply
	}
	if s.Page != nil && s.ESQuery != nil {
		intent := s.MainGoal
		if intent == "" {
			intent = s.Question
		}
		turn.KeyArtifacts = append(turn.KeyArtifacts, KeyArtifact{Type: ArtifactESQuery, Intent: intent, Slots: Slots{
			SlotQuery:      stripPage(s.ESQuery),
			SlotNextOffset: s.Page.NextOffset,
			SlotPageSize:   s.Page.Size,
			SlotTotal:      s.Page.Total,
		}})
	}
	return RecordUpdate{ConversationHistory: turn}, nil
}

package main

// `weft serve` driven by the real, unmodified LangGraph JS client
// (@langchain/langgraph-sdk, pinned in test/langgraph-sdk; `npm ci` there
// installs it): each test starts the weft binary and runs a node script of
// testdata/sdk against it. The scripts assert and exit non-zero naming
// what failed; their output is shown then.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/internal/chinooktest"
	"github.com/weftlang/weft/internal/sdktest"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/sqlite"
)

// sdkDir is the folder of the pinned client.
const sdkDir = "../../test/langgraph-sdk"

// sdkNode returns the node binary, or skips the test when node or the
// installed client is missing.
func sdkNode(t *testing.T) string { return sdktest.Node(t, sdkDir) }

// nodeScript is a node script of testdata/sdk started against a server.
type nodeScript struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan error
}

// startScript starts testdata/sdk/script with WEFT_URL=url and env; it is
// killed, if still running, when the test ends.
func startScript(t *testing.T, node, url, script string, env ...string) *nodeScript {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "sdk", script))
	cmd.Env = append(os.Environ(), "WEFT_URL="+url)
	cmd.Env = append(cmd.Env, env...)
	ns := &nodeScript{cmd: cmd, out: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = ns.out, ns.out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { ns.done <- cmd.Wait(); cancel() }()
	t.Cleanup(func() { cancel(); <-ns.done; ns.done <- nil })
	return ns
}

// wait waits for the script to end and fails the test with its output
// when it failed.
func (ns *nodeScript) wait(t *testing.T, server *weftServer) {
	t.Helper()
	err := <-ns.done
	ns.done <- err
	if err != nil {
		t.Fatalf("node %s: %v\n%s\nserver log:\n%s", ns.cmd.Args[1], err, ns.out, server.stderr)
	}
	t.Logf("node %s: ok\n%s", ns.cmd.Args[1], ns.out)
}

// sqlanalystSQL is the SQL the fake model writes for each question of
// testdata/sdk/sqlanalyst.mjs (keyed by the question, which the refined
// intent repeats).
var sqlanalystSQL = map[string]string{
	"Which artist has the most albums?":           "SELECT ar.Name AS artist, COUNT(*) AS albums FROM Artist ar JOIN Album al ON al.ArtistId = ar.ArtistId GROUP BY ar.ArtistId ORDER BY albums DESC LIMIT 1",
	"Which country spends the most?":              "SELECT BillingCountry AS country, ROUND(SUM(Total), 2) AS spent FROM Invoice GROUP BY BillingCountry ORDER BY spent DESC LIMIT 1",
	"Which genre has the most tracks?":            "SELECT g.Name AS genre, COUNT(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY tracks DESC LIMIT 1",
	"Which employee supports the most customers?": "SELECT e.FirstName || ' ' || e.LastName AS employee, COUNT(*) AS customers FROM Customer c JOIN Employee e ON e.EmployeeId = c.SupportRepId GROUP BY e.EmployeeId ORDER BY customers DESC LIMIT 1",
}

var (
	reNewMessage = regexp.MustCompile(`New message: (.*)`)
	reRestate    = regexp.MustCompile(`restate "(.*?)" as a precise`)
	reIntent     = regexp.MustCompile(`Analytical intent: intent of: (.*)`)
	reResult     = regexp.MustCompile(`(?s)Result:\n(.*?)\n\s*Write the insight`)
	reQuestion   = regexp.MustCompile(`Question: (.*)`)
	reInsight    = regexp.MustCompile(`insight: [^"\n]*`)
	reHuman      = regexp.MustCompile(`(?m)Human: (.*)$`)
	reQuery      = regexp.MustCompile(`(?s)one short line each\.\n\s*(.*)$`)
)

// sqlanalystModel answers each of sqlanalyst's prompts from what the
// request holds, never from the order of calls, so that conversations
// running at once each get the replies to their own questions: the
// orchestrator sends "What did I ask you before?" to scenario B and every
// other question on; intents are clear; the intent repeats the question;
// the SQL is sqlanalystSQL's for it; the insight quotes the real result;
// the answer quotes the insights; scenario B's answer lists the questions
// of the chat history in its prompt.
func sqlanalystModel(req llm.Request) llmtest.Reply {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Content)
		b.WriteString("\n")
	}
	p := b.String()
	sub := func(re *regexp.Regexp) string {
		if m := re.FindStringSubmatch(p); m != nil {
			return strings.TrimSpace(m[1])
		}
		return ""
	}
	switch {
	case strings.Contains(p, "You are the orchestrator"):
		if sub(reNewMessage) == "What did I ask you before?" {
			return llmtest.JSON(map[string]any{"decision": "B"})
		}
		return llmtest.JSON(map[string]any{"decision": "continue"})
	case strings.Contains(p, "Is the analytical intent of the question clear"):
		return llmtest.JSON(map[string]any{"clarity": "clear"})
	case strings.Contains(p, "Refine technically the user ask"):
		return llmtest.Text("intent of: " + sub(reRestate))
	case strings.Contains(p, "Create the SQL query"):
		sql, ok := sqlanalystSQL[sub(reIntent)]
		if !ok {
			return llmtest.Status(400, "the fake model has no SQL for this intent: "+sub(reIntent))
		}
		return llmtest.JSON(map[string]any{"queries": []string{sql}})
	case strings.Contains(p, "Write the insight"):
		return llmtest.Text("insight: " + strings.Join(strings.Fields(sub(reResult)), " "))
	case strings.Contains(p, "Highlight parts of this query"):
		return llmtest.Text("explains: " + sub(reQuery))
	case strings.Contains(p, "Answer the question from these results"):
		insights := reInsight.FindAllString(p, -1)
		return llmtest.Text("Answer to " + sub(reQuestion) + " " + strings.Join(insights, "; ") + ". Key Assumptions: none.")
	case strings.Contains(p, "Reply to the user's message briefly"):
		var asked []string
		for _, m := range reHuman.FindAllStringSubmatch(p, -1) {
			asked = append(asked, strings.TrimSpace(m[1]))
		}
		return llmtest.Text("You asked before: " + strings.Join(asked, " | "))
	}
	return llmtest.Status(400, "the fake model does not know this prompt: "+p)
}

// Seed 002's sqlanalyst served by `weft serve`, two conversations of three
// turns at once on two threads, with the real client: each thread's
// answers and SQL come from its own questions, its chat history and its
// checkpoints hold only its own turns (the third turn recalls the first
// two), threads.search by metadata finds each, and the streamed updates
// name the nodes of the seed's scenario A and B paths. The model is a
// fake over OpenAI's wire whose replies depend on the request only; the
// SQL runs for real on Chinook.
func TestServeSDKSQLAnalyst(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft")
	}
	node := sdkNode(t)
	db := chinooktest.SQLite(t)
	bin := buildWeft(t)
	model := llmtest.NewOpenAIServer()
	defer model.Close()
	model.RepeatFunc(sqlanalystModel)
	wf, _ := filepath.Abs(filepath.Join("..", "..", "examples", "sqlanalyst", "sqlanalyst.wf"))
	s := startServe(t, bin, []string{"OPENAI_BASE_URL=" + model.BaseURL(), "OPENAI_API_KEY=sk-test"},
		wf, "--db", db, "--llm", "openai:fake", "--store", filepath.Join(t.TempDir(), "s.db"))
	startScript(t, node, s.url, "sqlanalyst.mjs").wait(t, s)
	// Whether the conversations overlapped in the model (they run at once;
	// on a loaded machine their model calls may still not).
	t.Logf("the model had at most %d calls in flight", model.MaxInFlight())
}

// A run streamed by the real client while its `weft serve` is SIGKILLed
// mid-run and restarted on the same address: the client rejoins the run's
// stream by itself, the restarted server resumes the run from its last
// recorded step, join gives the final values, and the history (through
// the client, and in the store) has every step once, every effect
// requested.
func TestServeSDKSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft and kills servers")
	}
	node := sdkNode(t)
	bin := buildWeft(t)
	const n = 400
	path := filepath.Join(t.TempDir(), "serve.db")
	srv, wf, st := crashSetup(t, crashWF, "crash.wf", func(ctx context.Context) (store.Store, error) { return sqlite.Open(ctx, path) })
	env := []string{"WEFT_LEASE_TTL=1s"}
	addr := freeAddr(t)
	s := startServeAt(t, bin, addr, env, wf, "--store", path)
	var want int64
	for i := int64(0); i < n; i++ {
		want += i * i
	}
	script := startScript(t, node, s.url, "sigkill.mjs", "THREAD=k", fmt.Sprintf("N=%d", n), fmt.Sprintf("WANT_ACC=%d", want))
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	killed, err := waitToKill(context.Background(), st, "k", 1, 20+rng.IntN(40), time.After(30*time.Second), s.done, rng)
	if !killed {
		t.Fatalf("the server ended before the kill: %v\n%s", err, s.stderr)
	}
	if recs, _ := st.Records(context.Background(), "k", 1); len(recs) == 0 {
		t.Fatalf("no run started in 30 s\nscript:\n%s\nserver:\n%s", script.out, s.stderr)
	}
	_ = s.cmd.Process.Kill() // SIGKILL
	<-s.done
	s.done <- nil // for the cleanup
	killedAt := time.Now()
	s = startServeAt(t, bin, addr, env, wf, "--store", path)
	t.Logf("restarted in %v", time.Since(killedAt).Round(time.Millisecond))
	script.wait(t, s)
	if !strings.Contains(s.stderr.String(), "runs picked up") {
		t.Errorf("the restarted server did not pick the run up:\n%s", s.stderr)
	}
	checkSteps(t, &engine.Threads{Store: st}, srv, "k", n)
}

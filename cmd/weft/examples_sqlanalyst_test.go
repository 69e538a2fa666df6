package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/internal/chinooktest"
	"github.com/weftlang/weft/internal/datadir"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/sqltool"
)

// The recorded sessions of examples/sqlanalyst: seed 002's scenarios A-D on
// the Chinook database, scenario A with a syntax repair and a refinement of
// a result over 500 tokens. The model's replies are scripted; the SQL runs
// for real, read-only.
func sqlanalystSessions() []session {
	const (
		badAlbums = "SELECT ar.Name AS artist, COUNT(al.AlbumId) AS albums FROM Artists ar JOIN Album al ON al.ArtistId = ar.ArtistId GROUP BY ar.ArtistId ORDER BY albums DESC LIMIT 5"
		albums    = "SELECT ar.Name AS artist, COUNT(al.AlbumId) AS albums FROM Artist ar JOIN Album al ON al.ArtistId = ar.ArtistId GROUP BY ar.ArtistId ORDER BY albums DESC LIMIT 5"
		longGenre = "SELECT t.Name AS track, g.Name AS genre FROM Track t JOIN Genre g ON g.GenreId = t.GenreId"
		genres    = "SELECT g.Name AS genre, COUNT(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY tracks DESC LIMIT 5"
	)
	return []session{
		{
			example: "sqlanalyst", name: "scenario_a", file: "sqlanalyst.wf", data: chinook,
			input: "Which artists have the most albums, and which genres have the most tracks?",
			script: []llmtest.Reply{
				llmtest.JSON(map[string]any{"decision": "continue"}),
				llmtest.JSON(map[string]any{"clarity": "clear"}),
				llmtest.Text("Two rankings: (1) artists by number of albums (Artist joined to Album on ArtistId, count per artist, top 5); (2) genres by number of tracks (Track joined to Genre on GenreId, count per genre, top 5)."),
				llmtest.JSON(map[string]any{"queries": []string{badAlbums, longGenre}}),
				// query 1: no such table: Artists -> corrected
				llmtest.Text(albums),
				llmtest.Text("Iron Maiden has the most albums (21), then Led Zeppelin (14) and Deep Purple (11)."),
				llmtest.Text("- FROM Artist JOIN Album: pairs each album with its artist\n- GROUP BY ArtistId: one row per artist\n- ORDER BY albums DESC LIMIT 5: the five with most albums"),
				// query 2: every track with its genre, far over 500 tokens -> refined
				llmtest.Text(genres),
				llmtest.Text("Rock leads with 1,297 tracks, then Latin (579) and Metal (374)."),
				llmtest.Text("- FROM Track JOIN Genre: each track with its genre\n- GROUP BY GenreId: one row per genre\n- ORDER BY tracks DESC LIMIT 5: the five largest genres"),
				llmtest.Text("Iron Maiden has the most albums (21), ahead of Led Zeppelin (14) and Deep Purple (11); Rock has the most tracks (1,297), ahead of Latin (579) and Metal (374).\n\nKey Assumptions: an album counts for the artist it is filed under; every track has one genre."),
			},
			path: []string{"load_schema", "orchestrator", "extract_analytical_intent", "refine_intent", "next_tool",
				"create_sql_query_or_queries", "execute_sql_query", "next_tool", "generate_answer", "answer_a", "remember"},
			outputs: map[string]string{"answer": "Key Assumptions", "scenario": `"A"`, "sql": "GROUP BY g.GenreId"},
		},
		{
			example: "sqlanalyst", name: "scenario_b", file: "sqlanalyst.wf", data: chinook,
			input: "Hi! Thanks for your help earlier.",
			script: []llmtest.Reply{
				llmtest.JSON(map[string]any{"decision": "B"}),
				llmtest.Text("You're welcome! Ask me anything about the music store's data."),
			},
			path:    []string{"load_schema", "orchestrator", "generate_answer", "answer_b", "remember"},
			outputs: map[string]string{"answer": "welcome", "scenario": `"B"`, "sql": "[]"},
		},
		{
			example: "sqlanalyst", name: "scenario_c", file: "sqlanalyst.wf", data: chinook,
			input: "What is the average customer satisfaction score per store?",
			script: []llmtest.Reply{
				llmtest.JSON(map[string]any{"decision": "C"}),
				llmtest.Text("The schema has no satisfaction scores, but invoice totals per customer country would show where customers spend most."),
				llmtest.Text("The database holds no customer satisfaction scores. Instead, I can compare invoice totals per customer country to show where customers spend most."),
			},
			path:    []string{"load_schema", "orchestrator", "suggest_analysis", "generate_answer", "answer_c", "remember"},
			outputs: map[string]string{"answer": "no customer satisfaction", "scenario": `"C"`, "notes": "invoice totals"},
		},
		{
			example: "sqlanalyst", name: "scenario_d", file: "sqlanalyst.wf", data: chinook,
			input: "Who are our best customers?",
			script: []llmtest.Reply{
				llmtest.JSON(map[string]any{"decision": "continue"}),
				llmtest.JSON(map[string]any{"clarity": "ambiguous"}),
				llmtest.Text("1. Customers by total amount invoiced\n2. Customers by number of invoices\n3. Customers by number of tracks bought"),
				llmtest.Text("\"Best\" can mean the most money spent, the most purchases or the most tracks bought; each gives a different ranking."),
				llmtest.Text("Which ranking do you mean: 1. total amount invoiced, 2. number of invoices, or 3. number of tracks bought?"),
			},
			path: []string{"load_schema", "orchestrator", "extract_analytical_intent", "list_alternatives", "explain_ambiguity",
				"generate_answer", "answer_d", "remember"},
			outputs: map[string]string{"answer": "Which ranking", "scenario": `"D"`, "notes": "most money spent"},
		},
	}
}

func TestSQLAnalystSessions(t *testing.T) { runSessions(t, sqlanalystSessions()) }

// Chat memory: in a thread, the second turn's prompts see the first turn,
// and chat_history holds both.
func TestSQLAnalystChatMemoryInAThread(t *testing.T) {
	db := datadir.Require(t, "chinook/Chinook_Sqlite.sqlite")
	srv := llmtest.NewOpenAIServer(
		llmtest.JSON(map[string]any{"decision": "B"}),
		llmtest.Text("Hello! Ask me about the music store's sales."),
		llmtest.JSON(map[string]any{"decision": "B"}),
		llmtest.Text("You said hello, and I offered to help with the store's sales."),
	)
	defer srv.Close()
	getenv := openAIEnv(srv, "sk-test")
	store := filepath.Join(t.TempDir(), "threads.db")
	file := filepath.Join("..", "..", "examples", "sqlanalyst", "sqlanalyst.wf")
	for _, input := range []string{"Hello!", "What did I say first?"} {
		r := weft(t, []string{"run", file, "--db", db, "--llm", "openai:scripted", "--thread", "chat1", "--store", store,
			"--input", input, "--json"}, func(e *env) { e.getenv = getenv })
		r.wantCode(t, 0)
		if input != "Hello!" && !strings.Contains(r.stdout, `"question": "Hello!"`) {
			t.Errorf("the second turn's chat_history lacks the first: %s", r.stdout)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model calls, want 4", len(reqs))
	}
	third := string(reqs[2].Body)
	if !strings.Contains(third, `Human: Hello!\nAI: Hello! Ask me about the music store's sales.`) {
		t.Errorf("the second turn's orchestrator prompt lacks the first turn:\n%s", third)
	}
}

// The agent on PostgreSQL (--db postgres://...): the schema it is given is
// PostgreSQL's, its SQL runs there read-only, and a DROP the model writes
// is refused, repaired from the refusal, and changes nothing.
func TestSQLAnalystOnPostgreSQL(t *testing.T) {
	// As the read-only role docs/tools.md recommends: sqltool refuses a
	// superuser.
	dsn := chinooktest.Reader(t, chinooktest.PostgreSQL(t))
	srv := llmtest.NewOpenAIServer(
		llmtest.JSON(map[string]any{"decision": "continue"}),
		llmtest.JSON(map[string]any{"clarity": "clear"}),
		llmtest.Text("count the albums"),
		llmtest.JSON(map[string]any{"queries": []string{"DROP TABLE album"}}),
		llmtest.Text("SELECT count(*) AS albums FROM album"),
		llmtest.Text("There are 347 albums."),
		llmtest.Text("- count(*) over album"),
		llmtest.Text("The store has 347 albums."),
	)
	defer srv.Close()
	getenv := openAIEnv(srv, "sk-test")
	r := weft(t, []string{"run", filepath.Join("..", "..", "examples", "sqlanalyst", "sqlanalyst.wf"), "--db", dsn,
		"--llm", "openai:scripted", "--input", "How many albums are there?", "--json"}, func(e *env) { e.getenv = getenv })
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, `"SELECT count(*) AS albums FROM album"`) || !strings.Contains(r.stdout, "347 albums") {
		t.Errorf("stdout = %s", r.stdout)
	}
	reqs := srv.Requests()
	if len(reqs) != 8 {
		t.Fatalf("%d model calls, want 8", len(reqs))
	}
	if schema := string(reqs[0].Body); !strings.Contains(schema, "PostgreSQL") || !strings.Contains(schema, "artist_id") {
		t.Errorf("the orchestrator was not given PostgreSQL's schema: %.400s", schema)
	}
	if repair := string(reqs[4].Body); !strings.Contains(repair, "DROP TABLE album") || !strings.Contains(repair, "query refused") {
		t.Errorf("the repair prompt lacks the refused query and the reason: %.600s", repair)
	}
	if analysis := string(reqs[5].Body); !strings.Contains(analysis, "347") {
		t.Errorf("the analysis prompt lacks the result: %.600s", analysis)
	}
	// The table is still there.
	db, err := sqltool.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Query(context.Background(), "SELECT count(*) FROM album")
	if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != int64(347) {
		t.Errorf("album after the run: %v, %v", res, err)
	}
}

// TestSQLToolRefusesUnsafeRole checks that --db as a PostgreSQL superuser
// fails the run with the role's powers and the way out named, and that
// --db-allow-unsafe-role runs it with a warning on stderr.
func TestSQLToolRefusesUnsafeRole(t *testing.T) {
	dsn := chinooktest.PostgreSQL(t) // the cluster's superuser
	args := []string{"run", filepath.Join("..", "..", "examples", "sqlanalyst", "sqlanalyst.wf"), "--db", dsn,
		"--llm", "openai:scripted", "--input", "How many albums are there?", "--json"}
	run := func(extra ...string) cliResult {
		srv := llmtest.NewOpenAIServer(
			llmtest.JSON(map[string]any{"decision": "continue"}),
			llmtest.JSON(map[string]any{"clarity": "clear"}),
			llmtest.Text("count the albums"),
			llmtest.JSON(map[string]any{"queries": []string{"SELECT count(*) AS albums FROM album"}}),
			llmtest.Text("There are 347 albums."),
			llmtest.Text("- count(*) over album"),
			llmtest.Text("The store has 347 albums."),
		)
		defer srv.Close()
		getenv := openAIEnv(srv, "sk-test")
		return weft(t, append(args, extra...), func(e *env) { e.getenv = getenv })
	}
	r := run()
	r.wantCode(t, exitFailed)
	if out := r.stdout + r.stderr; !strings.Contains(out, "is a superuser") || !strings.Contains(out, "--db-allow-unsafe-role") {
		t.Errorf("the refusal does not name the role's powers and the flag\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	r = run("--db-allow-unsafe-role")
	r.wantCode(t, 0)
	if !strings.Contains(r.stderr, "weft: warning: --db") || !strings.Contains(r.stderr, "superuser") {
		t.Errorf("stderr has no warning about the role:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "347 albums") {
		t.Errorf("stdout = %s", r.stdout)
	}
}

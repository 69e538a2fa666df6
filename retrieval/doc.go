// Package retrieval is full-text (and optionally vector) retrieval over
// SQLite, for weft's built-in retrieve tool and the example agents: an
// Index of Documents (ID, Text, optional Title, metadata) in one SQLite
// database (a file, or ":memory:"), searched with BM25 and filtered by
// metadata.
//
// # Storage
//
// Open creates or opens the database through modernc.org/sqlite (WAL mode
// for files: writes go through one connection, searches through a pool)
// and migrates its schema, which is versioned in table schema_version;
// a file from a newer version of this package is refused with a
// *SchemaError. Documents are kept as given in table docs; an FTS5 table
// indexes their Title and Text (tokenizer unicode61 with diacritics
// removed, after dropping thousands separators from numbers, so that
// "1,452.4" and "1452.4" match); table meta holds one row per metadata
// pair for Query.Filter. Add upserts any number of documents in one
// transaction.
//
// # Queries
//
// A query's text is never parsed as FTS5 syntax. It is cut into words
// (runs of letters and digits), and the MATCH expression is built from
// those words, each double-quoted, so no input can make a syntax error,
// use an operator or a column filter (FuzzSearch checks this). A text
// without words finds nothing. The expression is an OR of
//
//   - every distinct word, leaving out a short list of English stop words
//     (unless the text has nothing else);
//   - every phrase of two adjacent words, neither a stop word
//     ("interest cost");
//   - every pair of consecutive non-stop words within two tokens of each
//     other, in either order (NEAR("cost" "revenue", 2) for "cost of
//     revenue");
//
// at most 32 of each kind. BM25 (FTS5's bm25(), Title weighted
// Options.TitleWeight, 2 by default, against Text's 1) sums the scores of
// the parts that match, so a document with the question's words together
// ranks above one that merely has them.
//
// # Vectors
//
// With Options.Embedder, Add embeds each document's title and text and
// stores the vector (float32, little-endian) as a BLOB beside it. Query.Mode
// picks Keyword (BM25), Vector (exact cosine similarity over every
// document that has a vector and passes the filter) or Hybrid (the two
// rankings fused by reciprocal rank, 1/(60+rank)); Auto, the zero Mode,
// is Hybrid when there is an Embedder and Keyword otherwise.
//
// # Measurements on TAT-QA
//
// LoadTATQA makes each TAT-QA context (a table from a financial report and
// its paragraphs) one Document: the table and paragraphs as Text, and as
// Title one line per figure of the table naming its row label and column
// header ("Total sales 2019"). Recall measures recall@k, the fraction of
// questions whose gold context is among the first k contexts found.
//
// Over all 1,668 questions of the dev split (278 contexts):
//
//	                                             @1      @5      @10
//	baseline: whole context in one column,      0.5474  0.7950  0.8705
//	  default unicode61 tokenizer, OR of
//	  every word of the question
//	default Index and LoadTATQA documents       0.6739  0.8897  0.9335
//
// reproduced by
//
//	go test -run TestTATQARecall -v ./retrieval/
//
// What each part is worth, on the LoadTATQA documents (recall @1/@5/@10):
// words only (stop words left out), 0.562/0.813/0.882; adding the NEAR
// pairs but not the phrases, 0.645/0.873/0.921; the phrases but not the
// NEAR pairs, 0.654/0.875/0.932; both, 0.674/0.890/0.933. With the same
// queries, other layouts of a context do worse: all of it in Text and no
// Title, 0.647/0.876/0.925; the table as Title and the paragraphs as
// Text, 0.657/0.887/0.932; chunks (the table, with the row and column
// names as Title, and each paragraph, a Document each) ranked by their
// best chunk, 0.663/0.882/0.929. What did not help, and is not used: the
// porter stemmer (0.668/0.884/0.934 here; on the baseline it costs 0.03
// to 0.05 at every k: it conflates words such as "operating" and
// "operations", or "general" and "generally", that name different rows),
// a longer stop-word list (slightly worse), three-word phrases around a
// stop word (+0.007 at @1, -0.002 at @5: noise). Title weights from 0.5
// to 3 are within 0.005 of each other.
//
// BenchmarkSearch (top 10 of the 278 contexts, documents loaded) takes
// about 3 to 4 ms a search (50 KB and 376 allocations) on a busy 2-core
// machine.
//
// # Concurrency and errors
//
// An Index is safe for concurrent use; an index file may be shared by
// processes. Errors about arguments wrap ErrInvalid; a Vector or Hybrid
// search without an Embedder wraps ErrNoEmbedder; embedder failures are
// *EmbedError; a failed migration step is a *MigrationError.
package retrieval

package sqltool

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// tokenKind classifies the tokens of the small SQL lexer.
type tokenKind int

const (
	tkWord      tokenKind = iota // bare identifier or keyword, e.g. SELECT, album_id
	tkQuoted                     // quoted identifier: "x", and for SQLite [x] and `x`
	tkString                     // string literal: 'x', E'x' (the E is its own word), $tag$x$tag$
	tkNumber                     // numeric literal
	tkPunct                      // operator, parenthesis, comma, parameter marker...
	tkSemicolon                  // ';', the statement separator
)

// token is one lexeme of a statement. Whitespace and comments are not
// tokens.
type token struct {
	kind       tokenKind
	text       string // the source text of the token (with a UESCAPE clause, that too)
	start, end int    // byte offsets in the source
	depth      int    // parenthesis depth at the token ('(' and ')' carry the outer depth)
	// name is the identifier a tkWord or tkQuoted token stands for, as the
	// database reads it: quotes removed and escapes decoded (PostgreSQL's
	// U&"..." Unicode escapes too), a bare word folded to lower case, and
	// for PostgreSQL truncated to 63 bytes.
	name string
	// unicode marks a PostgreSQL U&"..." identifier or U&'...' string,
	// whose escapes lex decodes once it knows the escape character.
	unicode bool
}

// statement is the tokens between two top-level semicolons, with the span
// of source text from its first token to its last.
type statement struct {
	toks       []token
	start, end int
}

// text returns the statement's source text, without surrounding
// whitespace, comments or its terminating semicolon.
func (s statement) text(src string) string { return src[s.start:s.end] }

// lexError reports SQL the lexer cannot tokenise (an unterminated literal,
// identifier or comment).
type lexError struct {
	pos int
	msg string
}

func (e *lexError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.pos) }

// lex splits src into tokens following the quoting rules of dialect
// (SQLite or PostgreSQL): single-quoted strings with ” escapes,
// double-quoted identifiers with "" escapes, -- and /* */ comments
// (nested for PostgreSQL), PostgreSQL E'...' strings with backslash
// escapes and $tag$...$tag$ dollar quotes, SQLite [identifiers] and
// `identifiers`. It never panics; text it cannot tokenise is an error.
func lex(dialect, src string) ([]token, error) {
	pg := dialect == PostgreSQL
	var toks []token
	depth := 0
	emit := func(kind tokenKind, start, end int) {
		t := token{kind: kind, text: src[start:end], start: start, end: end, depth: depth}
		if kind == tkPunct && t.text == ")" && depth > 0 {
			depth--
			t.depth = depth
		}
		toks = append(toks, t)
		if kind == tkPunct && t.text == "(" {
			depth++
		}
	}
	n := len(src)
	i := 0
	for i < n {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < n && src[i+1] == '-':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				i = n
			} else {
				i += j + 1
			}
		case c == '/' && i+1 < n && src[i+1] == '*':
			end, err := skipBlockComment(src, i, pg)
			if err != nil {
				return nil, err
			}
			i = end
		case c == '\'':
			// E'...' (PostgreSQL): the preceding word is E, directly adjacent.
			backslash := pg && len(toks) > 0 && toks[len(toks)-1].end == i &&
				toks[len(toks)-1].kind == tkWord && strings.EqualFold(toks[len(toks)-1].text, "e")
			end, err := scanQuoted(src, i, '\'', backslash, "unterminated string literal")
			if err != nil {
				return nil, err
			}
			emit(tkString, i, end)
			i = end
		case c == '"':
			end, err := scanQuoted(src, i, '"', false, "unterminated quoted identifier")
			if err != nil {
				return nil, err
			}
			emit(tkQuoted, i, end)
			i = end
		case !pg && c == '`':
			end, err := scanQuoted(src, i, '`', false, "unterminated quoted identifier")
			if err != nil {
				return nil, err
			}
			emit(tkQuoted, i, end)
			i = end
		case !pg && c == '[':
			j := strings.IndexByte(src[i+1:], ']')
			if j < 0 {
				return nil, &lexError{i, "unterminated [identifier]"}
			}
			emit(tkQuoted, i, i+1+j+1)
			i += j + 2
		case pg && c == '$':
			if i+1 < n && isDigit(src[i+1]) { // positional parameter $1
				j := i + 1
				for j < n && isDigit(src[j]) {
					j++
				}
				emit(tkPunct, i, j)
				i = j
				continue
			}
			j := i + 1
			if j < n && isIdentStart(src[j]) {
				for j < n && isIdentChar(src[j]) && src[j] != '$' {
					j++
				}
			}
			if j < n && src[j] == '$' { // dollar quote $tag$
				delim := src[i : j+1]
				k := strings.Index(src[j+1:], delim)
				if k < 0 {
					return nil, &lexError{i, "unterminated dollar-quoted string"}
				}
				end := j + 1 + k + len(delim)
				emit(tkString, i, end)
				i = end
				continue
			}
			emit(tkPunct, i, i+1)
			i++
		case pg && (c == 'u' || c == 'U') && i+2 < n && src[i+1] == '&' && (src[i+2] == '"' || src[i+2] == '\''):
			// U&"..." and U&'...': Unicode escapes, decoded below.
			kind, msg := tkQuoted, "unterminated quoted identifier"
			if src[i+2] == '\'' {
				kind, msg = tkString, "unterminated string literal"
			}
			end, err := scanQuoted(src, i+2, src[i+2], false, msg)
			if err != nil {
				return nil, err
			}
			emit(kind, i, end)
			toks[len(toks)-1].unicode = true
			i = end
		case isIdentStart(c):
			j := i + 1
			for j < n && isIdentChar(src[j]) {
				j++
			}
			emit(tkWord, i, j)
			i = j
		case isDigit(c) || (c == '.' && i+1 < n && isDigit(src[i+1])):
			j := i + 1
			for j < n && (isIdentChar(src[j]) || src[j] == '.') && src[j] != '$' {
				// PostgreSQL before 15 reads 1U&"x" as 1 then U&"x".
				if pg && (src[j] == 'u' || src[j] == 'U') && j+1 < n && src[j+1] == '&' {
					break
				}
				j++
			}
			emit(tkNumber, i, j)
			i = j
		case c == ';':
			emit(tkSemicolon, i, i+1)
			i++
		default:
			emit(tkPunct, i, i+1)
			i++
		}
	}
	return names(dialect, src, toks)
}

// names fills in the name of every identifier token, and merges each
// PostgreSQL U&"..." or U&'...' token with the UESCAPE 'c' clause that
// follows it, if any, decoding its escapes with that character.
func names(dialect, src string, toks []token) ([]token, error) {
	pg := dialect == PostgreSQL
	out := toks[:0]
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == tkWord:
			t.name = strings.ToLower(t.text)
		case t.unicode:
			body := t.text // U&"...", without the UESCAPE clause
			esc := byte('\\')
			if i+2 < len(toks) && toks[i+1].kind == tkWord && strings.EqualFold(toks[i+1].text, "UESCAPE") {
				lit := toks[i+2]
				if lit.kind != tkString || len(lit.text) != 3 || lit.text[0] != '\'' || !validUnicodeEscape(lit.text[1]) {
					return nil, &lexError{toks[i+1].start, "invalid Unicode escape character after UESCAPE"}
				}
				esc = lit.text[1]
				t.end = lit.end
				t.text = src[t.start:t.end]
				i += 2
			}
			if t.kind == tkQuoted {
				name, err := decodeUnicodeEscapes(unquote(body[2:], '"'), esc)
				if err != nil {
					return nil, &lexError{t.start, err.Error()}
				}
				t.name = name
			}
		case t.kind == tkQuoted:
			switch t.text[0] {
			case '[':
				t.name = t.text[1 : len(t.text)-1]
			default:
				t.name = unquote(t.text, t.text[0])
			}
		}
		if pg && len(t.name) > maxIdentifierLen {
			t.name = truncateUTF8(t.name, maxIdentifierLen)
		}
		out = append(out, t)
	}
	return out, nil
}

// maxIdentifierLen is the longest identifier PostgreSQL keeps, in bytes
// (NAMEDATALEN-1); it truncates longer ones.
const maxIdentifierLen = 63

// truncateUTF8 returns the longest prefix of s of at most n bytes that
// does not split a UTF-8 sequence, as PostgreSQL truncates identifiers.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// unquote returns the content of lit, quoted by q, with doubled quotes
// undone.
func unquote(lit string, q byte) string {
	if len(lit) < 2 {
		return ""
	}
	return strings.ReplaceAll(lit[1:len(lit)-1], string([]byte{q, q}), string(q))
}

// validUnicodeEscape reports whether PostgreSQL accepts c as the escape
// character of a UESCAPE clause.
func validUnicodeEscape(c byte) bool {
	return !isHex(c) && c != '+' && c != '\'' && c != '"' && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v'
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// decodeUnicodeEscapes decodes the escapes of a U&"..." identifier the way
// PostgreSQL does: esc esc is esc, esc XXXX and esc +XXXXXX a code point
// (a UTF-16 surrogate pair in two escapes); anything else after esc is an
// error, and so are NUL, lone surrogates and code points past U+10FFFF.
func decodeUnicodeEscapes(s string, esc byte) (string, error) {
	if strings.IndexByte(s, esc) < 0 {
		return s, nil
	}
	var b strings.Builder
	hex := func(i, n int) (rune, bool) {
		if i+n > len(s) {
			return 0, false
		}
		var r rune
		for _, c := range []byte(s[i : i+n]) {
			if !isHex(c) {
				return 0, false
			}
			r = r<<4 | rune(hexVal(c))
		}
		return r, true
	}
	// escape reads the escape at i (s[i] == esc) and returns the code
	// unit and the offset past it.
	escape := func(i int) (rune, int, error) {
		if i+1 < len(s) && s[i+1] == '+' {
			if r, ok := hex(i+2, 6); ok {
				return r, i + 8, nil
			}
		} else if r, ok := hex(i+1, 4); ok {
			return r, i + 5, nil
		}
		return 0, 0, fmt.Errorf("invalid Unicode escape at byte %d of a U& identifier", i)
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c != esc {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == esc {
			b.WriteByte(esc)
			i += 2
			continue
		}
		r, next, err := escape(i)
		if err != nil {
			return "", err
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF: // high surrogate: a low one must follow
			if next >= len(s) || s[next] != esc {
				return "", fmt.Errorf("invalid Unicode surrogate pair at byte %d of a U& identifier", i)
			}
			lo, after, err := escape(next)
			if err != nil || lo < 0xDC00 || lo > 0xDFFF {
				return "", fmt.Errorf("invalid Unicode surrogate pair at byte %d of a U& identifier", i)
			}
			r = utf16.DecodeRune(r, lo)
			next = after
		case r >= 0xDC00 && r <= 0xDFFF, r == 0, r > unicode.MaxRune:
			return "", fmt.Errorf("invalid Unicode escape value at byte %d of a U& identifier", i)
		}
		b.WriteRune(r)
		i = next
	}
	return b.String(), nil
}

func hexVal(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// skipBlockComment returns the offset just past the /* */ comment starting
// at i. PostgreSQL block comments nest; SQLite's do not.
func skipBlockComment(src string, i int, nested bool) (int, error) {
	start := i
	level := 0
	for i < len(src) {
		switch {
		case src[i] == '/' && i+1 < len(src) && src[i+1] == '*' && (nested || level == 0):
			level++
			i += 2
		case src[i] == '*' && i+1 < len(src) && src[i+1] == '/':
			level--
			i += 2
			if level == 0 {
				return i, nil
			}
		default:
			i++
		}
	}
	return 0, &lexError{start, "unterminated /* comment"}
}

// scanQuoted returns the offset just past the literal quoted by q starting
// at i; a doubled q is an escaped q, and so is a backslash-escaped
// character when backslash is set.
func scanQuoted(src string, i int, q byte, backslash bool, msg string) (int, error) {
	start := i
	i++
	for i < len(src) {
		switch c := src[i]; {
		case backslash && c == '\\':
			i += 2
		case c == q:
			if i+1 < len(src) && src[i+1] == q {
				i += 2
				continue
			}
			return i + 1, nil
		default:
			i++
		}
	}
	return 0, &lexError{start, msg}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isIdentStart reports whether c may start a bare identifier. Bytes of
// multi-byte UTF-8 characters count as letters, as both databases treat
// them.
func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

// split lexes src and groups its tokens into statements separated by
// semicolons; statements with no tokens (empty, or only comments) are
// dropped.
func split(dialect, src string) ([]statement, error) {
	toks, err := lex(dialect, src)
	if err != nil {
		return nil, err
	}
	var stmts []statement
	begin := 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) && toks[i].kind != tkSemicolon {
			continue
		}
		if i > begin {
			part := toks[begin:i]
			stmts = append(stmts, statement{toks: part, start: part[0].start, end: part[len(part)-1].end})
		}
		begin = i + 1
	}
	return stmts, nil
}

// isLeadingKeyword reports whether kw (upper case) may start a read-only
// statement.
func isLeadingKeyword(kw string) bool {
	switch kw {
	case "SELECT", "WITH", "VALUES", "EXPLAIN":
		return true
	}
	return false
}

// isWriteKeyword reports whether kw (upper case) is refused wherever it
// appears as a bare word in a statement: these words introduce writes
// (including writes hidden in a WITH clause: WITH x AS (...) DELETE ...),
// schema changes, or statements other than queries (EXPLAIN ANALYZE
// EXECUTE ...).
func isWriteKeyword(kw string) bool {
	switch kw {
	case "INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "REPLACE", "INTO",
		"CREATE", "DROP", "ALTER", "TRUNCATE", "ATTACH", "DETACH", "PRAGMA",
		"VACUUM", "REINDEX", "GRANT", "REVOKE", "COPY", "EXECUTE", "PREPARE",
		"DEALLOCATE":
		return true
	}
	return false
}

// deniedFunctions returns the functions of dialect that may not be called,
// by name or, for entries ending in '*', by prefix. They run SQL given to
// them as text (which the lexer cannot see: query_to_xml, ts_stat,
// dblink...), reach outside the database (files, large objects, other
// sessions, server settings, replication), change state that outlives or
// escapes the transaction (session-level advisory locks, sequences,
// statistics, notifications), or only serve to stall (pg_sleep). Names are
// compared after decoding (see token.name), in lower case. The list is
// defence in depth, not a sandbox: on PostgreSQL the role's privileges and
// the per-call transaction and session reset are the boundary.
func deniedFunctions(dialect string) []string {
	if dialect == SQLite {
		return []string{"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "fsdir", "zipfile"}
	}
	return []string{
		// SQL given as text.
		"query_to_*", "cursor_to_*", "table_to_*", "schema_to_*", "database_to_*",
		"ts_stat", "ts_rewrite", "dblink", "dblink_*", "crosstab*", "connectby",
		"run_command_on_*", "pg_background_*",
		// Files, large objects, the network.
		"pg_read_*", "pg_ls_*", "pg_stat_file", "pg_file_*", "pg_logdir_*", "lo_*", "loread", "lowrite",
		"http", "http_*",
		// Other sessions, the server, replication.
		"pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
		"pg_promote", "pg_switch_wal", "pg_wal_replay_*", "pg_log_*", "pg_create_*",
		"pg_drop_replication_slot", "pg_replication_slot_*", "pg_copy_*", "pg_sync_replication_slots",
		"pg_logical_*", "pg_replication_origin_*", "pg_backup_*", "pg_start_backup", "pg_stop_backup",
		"pg_import_system_collations", "pg_nextoid", "binary_upgrade_*",
		// State that outlives or escapes the transaction.
		"pg_advisory_*", "pg_try_advisory_*", "set_config", "nextval", "setval", "pg_notify",
		"txid_current", "pg_current_xact_id", "pg_stat_reset*", "pg_stat_statements_reset",
		"pg_set_*", "pg_clear_*", "pg_restore_*", "brin_summarize_*", "brin_desummarize_*",
		"gin_clean_pending_list", "pg_prewarm", "pg_truncate_visibility_map",
		// Stalling.
		"pg_sleep*",
	}
}

// isDeniedFunction reports whether name (lower case) is a denied function
// of dialect.
func isDeniedFunction(dialect, name string) bool {
	for _, d := range deniedFunctions(dialect) {
		if prefix, ok := strings.CutSuffix(d, "*"); ok && strings.HasPrefix(name, prefix) || name == d {
			return true
		}
	}
	return false
}

// check returns the one read-only statement in src, or why it is refused.
func check(dialect, src string) (string, *RefusedError) {
	refuse := func(format string, args ...any) (string, *RefusedError) {
		return "", &RefusedError{SQL: src, Reason: fmt.Sprintf(format, args...)}
	}
	if i := strings.IndexByte(src, 0); i >= 0 {
		// SQLite would stop reading at the NUL; PostgreSQL rejects it.
		return refuse("the SQL contains a NUL byte at byte %d", i)
	}
	stmts, err := split(dialect, src)
	if err != nil {
		return refuse("the SQL could not be parsed: %v", err)
	}
	switch len(stmts) {
	case 0:
		return refuse("the SQL is empty: write one SELECT statement")
	case 1:
	default:
		return refuse("only one statement is allowed, found %d separated by ';'", len(stmts))
	}
	st := stmts[0]
	first := ""
	for _, t := range st.toks {
		if t.kind == tkPunct && t.text == "(" {
			continue
		}
		first = t.text
		if t.kind != tkWord {
			first = ""
		}
		break
	}
	if !isLeadingKeyword(strings.ToUpper(first)) {
		what := first
		if what == "" {
			what = st.toks[0].text
		}
		return refuse("only read-only queries are allowed: the statement must start with SELECT, WITH, VALUES or EXPLAIN, not %s", strings.ToUpper(what))
	}
	for i, t := range st.toks {
		if t.kind != tkWord && t.kind != tkQuoted {
			continue
		}
		call := i+1 < len(st.toks) && st.toks[i+1].kind == tkPunct && st.toks[i+1].text == "("
		afterDot := i > 0 && st.toks[i-1].kind == tkPunct && st.toks[i-1].text == "."
		if name := strings.ToLower(t.name); call && isDeniedFunction(dialect, name) {
			return refuse("the function %s is not allowed: it runs SQL given as text, reaches outside the database or changes state beyond the query", name)
		}
		if t.kind != tkWord || afterDot {
			continue
		}
		kw := strings.ToUpper(t.text)
		if kw == "REPLACE" && call { // the replace(x, y, z) string function
			continue
		}
		if isWriteKeyword(kw) {
			return refuse("%s is not allowed: only read-only queries run here (quote an identifier spelled like a keyword)", kw)
		}
	}
	return st.text(src), nil
}

// Check reports whether sql is acceptable to Query on a database of the
// given dialect (SQLite or PostgreSQL) without running it: exactly one
// statement, starting with SELECT, WITH, VALUES or EXPLAIN, with no NUL
// byte, no write
// keyword (INSERT, UPDATE, DELETE, REPLACE, INTO, CREATE, DROP, ALTER,
// ATTACH, PRAGMA, VACUUM, ...) anywhere outside literals and quoted
// identifiers, and no call to a function that reaches outside the
// database. The error is a *RefusedError.
func Check(dialect, sql string) error {
	if dialect != SQLite && dialect != PostgreSQL {
		return &RefusedError{SQL: sql, Reason: fmt.Sprintf("unknown dialect %q", dialect)}
	}
	if _, r := check(dialect, sql); r != nil {
		return r
	}
	return nil
}

// HasTopLevelOrderBy reports whether sql ends its outermost query with an
// ORDER BY, so that the order of its rows is meaningful; an ORDER BY inside
// parentheses (a subquery, a window) does not count. SQL that cannot be
// lexed has none.
func HasTopLevelOrderBy(dialect, sql string) bool {
	toks, err := lex(dialect, sql)
	if err != nil {
		return false
	}
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].depth == 0 && toks[i].kind == tkWord && strings.EqualFold(toks[i].text, "ORDER") &&
			toks[i+1].kind == tkWord && strings.EqualFold(toks[i+1].text, "BY") {
			return true
		}
	}
	return false
}

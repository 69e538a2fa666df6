package sqltool

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

const (
	sampleRows   = 20 // rows read from each table for samples
	maxSamples   = 3  // distinct samples kept per column
	maxSampleLen = 40 // runes kept of a sample string
)

// sampleCaps are the caps of the queries that read samples: values are
// clipped well before they are shortened to maxSampleLen.
var sampleCaps = caps{rows: sampleRows, bytes: 1 << 20, value: 4 * maxSampleLen * utf8.UTFMax}

// addSamples records in t's columns up to maxSamples distinct non-null
// values of res, rows of SELECT * from t, as SQL literals.
func addSamples(t *Table, res *Result) {
	if res == nil || len(res.Columns) != len(t.Columns) {
		return
	}
	for i := range t.Columns {
		seen := map[string]bool{}
		for _, row := range res.Rows {
			if len(t.Columns[i].Samples) == maxSamples {
				break
			}
			lit, ok := sampleLiteral(row[i])
			if !ok || seen[lit] {
				continue
			}
			seen[lit] = true
			t.Columns[i].Samples = append(t.Columns[i].Samples, lit)
		}
	}
}

// sampleLiteral writes v as a short SQL literal; false for NULL and for
// text that is not UTF-8 (blobs).
func sampleLiteral(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case bool:
		if x {
			return "TRUE", true
		}
		return "FALSE", true
	case string:
		if !utf8.ValidString(x) {
			return "", false
		}
		x = strings.Join(strings.Fields(x), " ")
		if utf8.RuneCountInString(x) > maxSampleLen {
			x = string([]rune(x)[:maxSampleLen]) + "..."
		}
		return "'" + strings.ReplaceAll(x, "'", "''") + "'", true
	}
	return "", false
}

// FormatSchema writes tables as the compact description Schema returns:
// for each, a CREATE TABLE-like block with the row count, column types,
// NOT NULL, primary and foreign keys, and sample values as comments.
// Identifiers are quoted where dialect needs it.
func FormatSchema(dialect string, tables []Table) string {
	var b strings.Builder
	name := "SQLite"
	if dialect == PostgreSQL {
		name = "PostgreSQL"
	}
	fmt.Fprintf(&b, "-- %s database, %d tables and views\n", name, len(tables))
	for _, t := range tables {
		kind := "TABLE"
		if t.View {
			kind = "VIEW"
		}
		fmt.Fprintf(&b, "CREATE %s %s (", kind, tableName(dialect, t.Schema, t.Name))
		if t.RowCount >= 0 {
			fmt.Fprintf(&b, " -- %d rows", t.RowCount)
		}
		b.WriteByte('\n')
		var lines, notes []string
		for _, c := range t.Columns {
			l := "  " + identifier(dialect, c.Name)
			if c.Type != "" {
				l += " " + c.Type
			}
			if c.NotNull {
				l += " NOT NULL"
			}
			lines = append(lines, l)
			note := ""
			if len(c.Samples) > 0 {
				note = "e.g. " + strings.Join(c.Samples, ", ")
			}
			notes = append(notes, note)
		}
		if len(t.PrimaryKey) > 0 {
			lines = append(lines, "  PRIMARY KEY ("+identifiers(dialect, t.PrimaryKey)+")")
			notes = append(notes, "")
		}
		for _, fk := range t.ForeignKeys {
			l := "  FOREIGN KEY (" + identifiers(dialect, fk.Columns) + ") REFERENCES " + tableName(dialect, fk.RefSchema, fk.RefTable)
			if len(fk.RefColumns) > 0 {
				l += "(" + identifiers(dialect, fk.RefColumns) + ")"
			}
			lines = append(lines, l)
			notes = append(notes, "")
		}
		for i, l := range lines {
			b.WriteString(l)
			if i < len(lines)-1 {
				b.WriteByte(',')
			}
			if notes[i] != "" {
				b.WriteString(" -- " + notes[i])
			}
			b.WriteByte('\n')
		}
		b.WriteString(");\n")
	}
	return b.String()
}

// tableName writes a table's name, qualified by its schema unless that is
// empty or public.
func tableName(dialect, schema, name string) string {
	if schema == "" || schema == "public" {
		return identifier(dialect, name)
	}
	return identifier(dialect, schema) + "." + identifier(dialect, name)
}

func identifiers(dialect string, names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = identifier(dialect, n)
	}
	return strings.Join(q, ", ")
}

// identifier quotes name when it must be quoted to be used as written: it
// is not a plain identifier, or, in PostgreSQL, it is not all lower case
// (unquoted names are folded to lower case there).
func identifier(dialect, name string) string {
	plain := name != "" && !isDigit(name[0])
	for i := 0; i < len(name) && plain; i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c == '_', isDigit(c):
		case c >= 'A' && c <= 'Z':
			plain = dialect != PostgreSQL
		default:
			plain = false
		}
	}
	if plain && isReservedWord(strings.ToUpper(name)) {
		plain = false
	}
	if plain {
		return name
	}
	return quoteIdent(name)
}

// isReservedWord reports whether kw (upper case) is a common reserved word
// that cannot be used as a bare identifier.
func isReservedWord(kw string) bool {
	switch kw {
	case "ALL", "AND", "AS", "ASC", "BY", "CASE", "CHECK", "COLUMN", "CONSTRAINT",
		"CREATE", "DEFAULT", "DELETE", "DESC", "DISTINCT", "DROP", "ELSE", "END",
		"EXCEPT", "FOR", "FOREIGN", "FROM", "GROUP", "HAVING", "IN", "INDEX",
		"INSERT", "INTERSECT", "INTO", "IS", "JOIN", "KEY", "LIMIT", "NOT", "NULL",
		"OFFSET", "ON", "OR", "ORDER", "PRIMARY", "REFERENCES", "REPLACE", "SELECT",
		"SET", "TABLE", "THEN", "TO", "UNION", "UNIQUE", "UPDATE", "USER", "USING",
		"VALUES", "WHEN", "WHERE", "WITH":
		return true
	}
	return false
}

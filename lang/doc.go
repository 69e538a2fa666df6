// Package lang implements the .wf workflow language: a scanner, a typed
// AST, an error-recovering parser (ParseFile), a canonical printer (Format,
// used by `weft fmt`), expression printing (ExprString, TypeString) and
// diagnostics rendering with source excerpts (FormatDiagnostics).
//
// Positions and diagnostics use the flow package's Pos and Diagnostic, so
// the compiler from this AST to flow's IR can report errors against the
// source. The language itself is described in docs/language.md.
package lang

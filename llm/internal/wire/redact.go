package wire

import (
	"net/http"
	"net/url"

	"github.com/weftlang/weft/internal/redact"
	"github.com/weftlang/weft/llm"
)

// Redacted replaces a credential in an error's text.
const Redacted = redact.Redacted

// Redactor removes a client's credentials from the errors it returns (see
// internal/redact). A nil *Redactor redacts only Bearer tokens.
type Redactor struct {
	r *redact.Redactor
}

// NewRedactor returns the Redactor of a client configured with baseURL,
// apiKey and the extra headers header.
func NewRedactor(baseURL, apiKey string, header http.Header) *Redactor {
	return &Redactor{r: redact.New(baseURL, apiKey, header)}
}

func (r *Redactor) inner() *redact.Redactor {
	if r == nil {
		return nil
	}
	return r.r
}

// String returns s with every credential replaced by Redacted.
func (r *Redactor) String(s string) string { return r.inner().String(s) }

// Error returns err with its text redacted. An *llm.Error is copied with
// its Message redacted and its Err wrapped so that its text is redacted
// too; errors.Is and errors.As still find the errors it wraps, whose own
// texts are not redacted. Another error is wrapped likewise, if its text
// holds a credential, and returned as is otherwise.
func (r *Redactor) Error(err error) error {
	if le, ok := err.(*llm.Error); ok {
		c := *le
		c.Message = r.String(le.Message)
		if le.Err != nil {
			c.Err = r.inner().Error(le.Err)
		}
		return &c
	}
	return r.inner().Error(err)
}

// SecretName reports whether a header or query parameter of that name
// carries a credential (see redact.SecretName).
func SecretName(name string) bool { return redact.SecretName(name) }

// SafeURL returns u as text without its user information and with its
// secret query values replaced (see redact.SafeURL).
func SafeURL(u *url.URL) string { return redact.SafeURL(u) }

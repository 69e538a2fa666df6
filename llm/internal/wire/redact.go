package wire

import (
	"net/http"

	"github.com/weftlang/weft/internal/redact"
	"github.com/weftlang/weft/llm"
)

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

// Error returns err with its text redacted. An *llm.Error is copied with
// its Message redacted and its Err wrapped so that its text is redacted
// too; errors.Is and errors.As still find the errors it wraps, whose own
// texts are not redacted. Another error is wrapped likewise, if its text
// holds a credential, and returned as is otherwise.
func (r *Redactor) Error(err error) error {
	if le, ok := err.(*llm.Error); ok {
		c := *le
		c.Message = r.inner().String(le.Message)
		if le.Err != nil {
			c.Err = r.inner().Error(le.Err)
		}
		return &c
	}
	return r.inner().Error(err)
}

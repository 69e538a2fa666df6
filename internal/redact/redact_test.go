package redact

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestRedactorString(t *testing.T) {
	r := New("https://bob:p%40ss-word@gw.example/v1?api_key=qs-secret-1&mode=fast", "sk-KEY-123456",
		http.Header{"X-Api-Key": {"hdr-key-7890"}, "Authorization": {"Basic dXNlcjpzZWNyZXQ="}, "X-Title": {"weft-app"}})
	for in, want := range map[string]string{
		"key sk-KEY-123456 is invalid":              "key [REDACTED] is invalid",
		"x-api-key: hdr-key-7890":                   "x-api-key: [REDACTED]",
		"Authorization: Bearer other-token-42abc":   "Authorization: Bearer [REDACTED]",
		"authorization: bearer sk-KEY-123456":       "authorization: bearer [REDACTED]",
		"Bearer authentication is required":         "Bearer authentication is required",
		"auth Basic dXNlcjpzZWNyZXQ= refused":       "auth [REDACTED] refused",
		"password p@ss-word, escaped p%40ss-word":   "password [REDACTED], escaped [REDACTED]",
		`Post "https://bob:***@gw.example/v1": EOF`: `Post "https://gw.example/v1": EOF`,
		"q=qs-secret-1 mode=fast":                   "q=[REDACTED] mode=fast",
		"app weft-app, user bob":                    "app weft-app, user bob", // not secrets; "bob" is too short
	} {
		if got := r.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	var nilR *Redactor
	if got := nilR.String("Bearer abc123def"); got != "Bearer [REDACTED]" {
		t.Errorf("nil redactor: %q", got)
	}
}

func TestSafeURL(t *testing.T) {
	u, _ := url.Parse("https://u:p@h.example/x?key=s3cret&token=t&v=1")
	if got, want := SafeURL(u), "https://h.example/x?key=%5BREDACTED%5D&token=%5BREDACTED%5D&v=1"; got != want {
		t.Errorf("SafeURL = %q, want %q", got, want)
	}
}

func TestRedactorError(t *testing.T) {
	r := New("", "sk-KEY-123456", nil)
	inner := &url.Error{Op: "Post", URL: "http://h/?k=sk-KEY-123456", Err: io.ErrUnexpectedEOF}
	err := r.Error(inner)
	if s := err.Error(); strings.Contains(s, "sk-KEY") || !strings.Contains(s, Redacted) {
		t.Errorf("Error() = %q", s)
	}
	var ue *url.Error
	if !errors.As(err, &ue) || ue != inner || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Error("errors.As/Is lost the wrapped error")
	}
	plain := errors.New("nothing secret")
	if r.Error(plain) != plain {
		t.Error("an error without credentials was wrapped")
	}
	if r.Error(nil) != nil {
		t.Error("nil became an error")
	}
}

// TestRedactorKeepsUserNamesAndFoldsBearer checks that a URL's user name
// is redacted only where the URL shows it, not as a word of the text, and
// that a Bearer token is redacted whatever the case of "Bearer".
func TestRedactorKeepsUserNamesAndFoldsBearer(t *testing.T) {
	r := Of([]string{"postgres://postgres:pw-SECRET@db.example/weft"}, nil)
	for in, want := range map[string]string{
		`store/postgres: connect postgres://postgres:pw-SECRET@db.example/weft: refused`: `store/postgres: connect postgres://db.example/weft: refused`,
		`password authentication failed for user "postgres" (pw-SECRET)`:                 `password authentication failed for user "postgres" ([REDACTED])`,
		`Authorization: BeArEr abc123def`:                                                `Authorization: BeArEr [REDACTED]`,
	} {
		if got := r.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://weft:s3cret@db.example:5432/weft": "postgres://weft:xxxxx@db.example:5432/weft",
		"postgres://weft@db/weft":                     "postgres://weft@db/weft",
		"http://u:p@a:b@es:9200":                      "http://u:xxxxx@es:9200",
		"/var/lib/chinook.sqlite":                     "/var/lib/chinook.sqlite",
		"user@host:/path://x":                         "user@host:/path://x",
	} {
		if got := DSN(in); got != want {
			t.Errorf("DSN(%q) = %q, want %q", in, got, want)
		}
	}
}

package wire

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/weftlang/weft/llm"
)

func TestRedactorString(t *testing.T) {
	r := NewRedactor("https://bob:p%40ss-word@gw.example/v1?api_key=qs-secret-1&mode=fast", "sk-KEY-123456",
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

func TestRedactorError(t *testing.T) {
	r := NewRedactor("", "sk-KEY-123456", nil)
	inner := &url.Error{Op: "Post", URL: "http://h/?k=sk-KEY-123456", Err: io.ErrUnexpectedEOF}
	err := r.Error(&llm.Error{Provider: "p", Status: 401, Message: "bad key sk-KEY-123456", Err: inner, Retryable: true})
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != 401 || !le.Retryable || le.Message != "bad key [REDACTED]" {
		t.Fatalf("err = %#v", err)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Error("errors.Is lost the wrapped error")
	}
	var ue *url.Error
	if !errors.As(err, &ue) || ue != inner {
		t.Error("errors.As lost the wrapped *url.Error")
	}
	if strings.Contains(le.Err.Error(), "sk-KEY") {
		t.Errorf("wrapped text %q", le.Err.Error())
	}
	// An error whose Message is empty prints its Err.
	err = r.Error(&llm.Error{Provider: "p", Err: inner})
	if s := err.Error(); strings.Contains(s, "sk-KEY") || !strings.Contains(s, "[REDACTED]") {
		t.Errorf("Error() = %q", s)
	}
	plain := errors.New("nothing secret")
	if r.Error(plain) != plain {
		t.Error("an error without credentials was wrapped")
	}
	if r.Error(nil) != nil {
		t.Error("nil became an error")
	}
}

func TestSafeURL(t *testing.T) {
	u, _ := url.Parse("https://u:p@h.example/x?key=s3cret&token=t&v=1")
	if got, want := SafeURL(u), "https://h.example/x?key=%5BREDACTED%5D&token=%5BREDACTED%5D&v=1"; got != want {
		t.Errorf("SafeURL = %q, want %q", got, want)
	}
}

// TestRedirectLoopNamesAbsoluteURL checks that a redirect loop through a
// relative Location is reported with the absolute URL, without its
// credentials.
func TestRedirectLoopNamesAbsoluteURL(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "loop?token=tok-SECRET-1")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer hs.Close()
	u, _ := url.Parse(hs.URL + "/api/chat")
	u.User = url.UserPassword("someone", "pw-SECRET-2")
	_, err := Post(context.Background(), "p", hs.Client(), u.String(), []byte("{}"), nil, nil, false, "", nil)
	if err == nil {
		t.Fatal("no error")
	}
	s := err.Error()
	want := `"` + hs.URL + `/api/loop?token=%5BREDACTED%5D"`
	if !strings.Contains(s, want) || !strings.Contains(s, "redirects") {
		t.Errorf("err = %s, want it to name %s", s, want)
	}
	if strings.Contains(s, "SECRET") || strings.Contains(s, "someone") {
		t.Errorf("err = %s names a credential", s)
	}
}

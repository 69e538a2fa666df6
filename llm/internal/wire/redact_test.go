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

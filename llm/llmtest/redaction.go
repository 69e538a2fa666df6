package llmtest

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/replay"
)

// Credentials configure a client in TestRedaction and
// TestEmbedRedaction: its base URL (the server's, with a user and
// password in it, and for one check a secret query parameter), its API
// key, and extra headers (one of which carries a token).
type Credentials struct {
	BaseURL string
	APIKey  string
	Header  http.Header
}

// The credentials the redaction checks configure, each distinct so that a
// leak names which one leaked.
const (
	SecretAPIKey   = "sk-llmtest-APIKEY-0123456789abcdef"
	SecretUser     = "llmtest-user-5555"
	SecretPassword = "pw-llmtest-SECRET-4242"
	SecretHeader   = "hdr-llmtest-SECRET-99887766"
	SecretQuery    = "q-llmtest-SECRET-7777"
)

// secrets lists every credential the checks configure.
var secrets = []string{SecretAPIKey, SecretUser, SecretPassword, SecretHeader, SecretQuery}

// withUser returns base with SecretUser and SecretPassword as its user
// information, and with a key query parameter if query.
func withUser(t *testing.T, base string, query bool) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(SecretUser, SecretPassword)
	if query {
		u.RawQuery = "key=" + SecretQuery
	}
	return u.String()
}

// creds returns the credentials for a server's base URL.
func creds(t *testing.T, base string, query bool) Credentials {
	return Credentials{
		BaseURL: withUser(t, base, query),
		APIKey:  SecretAPIKey,
		Header:  http.Header{"X-Gateway-Token": {SecretHeader}},
	}
}

// checkClean fails t if text holds a credential.
func checkClean(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s holds the credential %q: %s", what, s, text)
		}
	}
}

// TestRedaction checks that the credentials of a Model made by newModel
// never reach an error's text, nor a replay recording of the call: a
// server answering 401 and 500 (retryable), streamed and not, with the
// request's headers quoted in its error message (as a proxy does), and a
// server that is gone, whose URL the error names (with a secret query
// parameter in it). The error must still be an *llm.Error with the
// server's status, and say where a credential was cut out.
func TestRedaction(t *testing.T, p Protocol, newModel func(t *testing.T, c Credentials) llm.Model) {
	for _, tc := range []struct {
		name   string
		status int
		stream bool
	}{
		{"Unauthorized", http.StatusUnauthorized, false},
		{"UnauthorizedStream", http.StatusUnauthorized, true},
		{"ServerError", http.StatusInternalServerError, false},
		{"ServerErrorStream", http.StatusInternalServerError, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(p, Reply{Status: tc.status, ErrorMessage: "invalid credentials", EchoHeaders: true})
			defer s.Close()
			var rec bytes.Buffer
			m := replay.NewRecorder(newModel(t, creds(t, s.BaseURL(), false)), &rec)
			var onChunk func(llm.Chunk) error
			if tc.stream {
				onChunk = func(llm.Chunk) error { return nil }
			}
			_, err := m.Chat(context.Background(), userReq("hello"), onChunk)
			var le *llm.Error
			if !errors.As(err, &le) || le.Status != tc.status {
				t.Fatalf("err = %v, want an *llm.Error with status %d", err, tc.status)
			}
			// The server did echo them: the request reached it with them.
			reqs := s.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			if !strings.Contains(err.Error(), "[REDACTED]") {
				t.Errorf("err = %v: no credential was cut out of the echoed headers", err)
			}
			checkClean(t, "err.Error()", err.Error())
			checkClean(t, "the recording", rec.String())
		})
	}
	t.Run("ServerGone", func(t *testing.T) {
		s := NewServer(p)
		base := s.BaseURL()
		s.Close()
		m := newModel(t, creds(t, base, true))
		_, err := m.Chat(context.Background(), userReq("hello"), nil)
		var le *llm.Error
		if !errors.As(err, &le) {
			t.Fatalf("err = %v, want an *llm.Error", err)
		}
		checkClean(t, "err.Error()", err.Error())
		if !strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("err = %v does not name the server", err)
		}
	})
}

// TestEmbedRedaction is TestRedaction for an llm.Embedder.
func TestEmbedRedaction(t *testing.T, p Protocol, newEmbedder func(t *testing.T, c Credentials) llm.Embedder) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusInternalServerError} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			s := NewServer(p)
			defer s.Close()
			s.PushEmbed(Reply{Status: status, ErrorMessage: "invalid credentials", EchoHeaders: true})
			e := newEmbedder(t, creds(t, s.BaseURL(), false))
			_, err := e.Embed(context.Background(), &llm.EmbedRequest{Input: []string{"hello"}})
			var le *llm.Error
			if !errors.As(err, &le) || le.Status != status {
				t.Fatalf("err = %v, want an *llm.Error with status %d", err, status)
			}
			if !strings.Contains(err.Error(), "[REDACTED]") {
				t.Errorf("err = %v: no credential was cut out of the echoed headers", err)
			}
			checkClean(t, "err.Error()", err.Error())
		})
	}
	t.Run("ServerGone", func(t *testing.T) {
		s := NewServer(p)
		base := s.BaseURL()
		s.Close()
		_, err := newEmbedder(t, creds(t, base, true)).Embed(context.Background(), &llm.EmbedRequest{Input: []string{"hello"}})
		if err == nil {
			t.Fatal("no error from a server that is gone")
		}
		checkClean(t, "err.Error()", err.Error())
	})
}

package store_test

import (
	"testing"

	"github.com/weftlang/weft/store"
)

// TestLikeContains: the LIKE pattern lowers ASCII letters only and
// escapes %, _ and \ with \.
func TestLikeContains(t *testing.T) {
	for term, want := range map[string]string{
		"":        `%%`,
		"Ab-C":    `%ab-c%`,
		"50%":     `%50\%%`,
		"a_b":     `%a\_b%`,
		`C:\tmp`:  `%c:\\tmp%`,
		"Évian É": `%Évian É%`,
		`%_\`:     `%\%\_\\%`,
	} {
		if got := store.LikeContains(term); got != want {
			t.Errorf("LikeContains(%q) = %q, want %q", term, got, want)
		}
	}
}

// TestContains: a part of the ID or of a Meta value, ASCII letters of
// either case, nothing else folded; keys are not searched.
func TestContains(t *testing.T) {
	th := &store.Thread{ID: "Order-17", Meta: map[string]string{"city": "Évian", "user": `"Ann"`}}
	for term, want := range map[string]bool{
		"order-1": true, "DER": true, "17": true, "ann": true, `"ANN"`: true, "Évian": true,
		"évian": false, "city": false, "order-18": false, "Order-17-": false,
	} {
		if got := store.Contains(th, term); got != want {
			t.Errorf("Contains(%q) = %v, want %v", term, got, want)
		}
	}
}

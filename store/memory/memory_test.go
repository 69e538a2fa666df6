package memory

import (
	"context"
	"fmt"
	"testing"

	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/storetest"
)

// CorruptRecord flips a byte of a stored record's Data, for
// storetest.Corrupter.
func (s *Store) CorruptRecord(ctx context.Context, threadID string, seq int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	th, err := s.thread(threadID)
	if err != nil {
		return err
	}
	for _, r := range th.records {
		if r.Seq == seq && len(r.Data) > 0 {
			r.Data[len(r.Data)/2] ^= 0x20
			return nil
		}
	}
	return fmt.Errorf("thread %s has no record %d with data", threadID, seq)
}

var _ storetest.Corrupter = (*Store)(nil)

// DeleteRecord removes a stored record behind the store's back, for
// storetest.Deleter.
func (s *Store) DeleteRecord(ctx context.Context, threadID string, seq int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	th, err := s.thread(threadID)
	if err != nil {
		return err
	}
	for i, r := range th.records {
		if r.Seq == seq {
			th.records = append(th.records[:i:i], th.records[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("thread %s has no record %d", threadID, seq)
}

var _ storetest.Deleter = (*Store)(nil)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s := New()
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestClosed(t *testing.T) {
	s := New()
	s.Close()
	if _, err := s.Thread(t.Context(), "x"); err != ErrClosed {
		t.Errorf("Thread after Close: %v, want ErrClosed", err)
	}
}

package sqlite

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
)

// raceAppends has writers goroutines append to thread "t" of s from seq 1
// until the log holds total records, each trying the seq after the last one
// it saw. It returns the seqs each writer won (writer w writes data
// recordData(name, w, seq)); any error but a *store.ConflictError, or a
// conflict that says the log ends before a seq the writer itself wrote, is
// returned too.
func raceAppends(ctx context.Context, s *Store, name string, writers int, total int64, start <-chan struct{}) (map[int64]string, []error) {
	var (
		mu   sync.Mutex
		won  = map[int64]string{}
		errs []error
		wg   sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for w := range writers {
		wg.Go(func() {
			<-start
			who := fmt.Sprintf("%s/%d", name, w)
			seq := int64(1)
			for seq <= total {
				r := &store.Record{ThreadID: "t", RunID: "r", Seq: seq, Step: w, Kind: store.Step, Data: recordData(who, seq)}
				err := s.Append(ctx, r)
				var ce *store.ConflictError
				switch {
				case err == nil:
					mu.Lock()
					won[seq] = who
					mu.Unlock()
					seq++
				case errors.As(err, &ce):
					if ce.ThreadID != "t" || ce.Want != seq || ce.Got < seq-1 {
						fail(fmt.Errorf("%s: conflict at %d: %+v", who, seq, ce))
						return
					}
					seq = ce.Got + 1
				default:
					fail(fmt.Errorf("%s at seq %d: %w", who, seq, err))
					return
				}
			}
		})
	}
	wg.Wait()
	return won, errs
}

func recordData(who string, seq int64) []byte {
	return fmt.Appendf(nil, `{"writer":%q,"seq":%d}`, who, seq)
}

// checkRace checks that the log of thread "t" is 1..total, each record
// written by the one writer that won its seq.
func checkRace(t *testing.T, s *Store, total int64, won map[int64]string) {
	t.Helper()
	rs, err := s.Records(t.Context(), "t", 1)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(rs)) != total {
		t.Fatalf("log has %d records, want %d", len(rs), total)
	}
	for i, r := range rs {
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i, r.Seq)
		}
		who, ok := won[r.Seq]
		if !ok {
			t.Errorf("seq %d: no writer says it won it", r.Seq)
			continue
		}
		if want := recordData(who, r.Seq); !bytes.Equal(r.Data, want) {
			t.Errorf("seq %d holds %s, but %s won it", r.Seq, r.Data, who)
		}
	}
	if int64(len(won)) != total {
		t.Errorf("%d appends succeeded, want %d", len(won), total)
	}
}

// TestTwoStoresRace has two Store values on one file (each with its own
// writer connection, as two processes would have) race appends to one
// thread: every seq is written exactly once and the losers get a
// *store.ConflictError.
func TestTwoStoresRace(t *testing.T) {
	const total = 300
	a, path := openTemp(t)
	b, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.CreateThread(t.Context(), &store.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	start := make(chan struct{})
	var (
		wg           sync.WaitGroup
		wonA, wonB   map[int64]string
		errsA, errsB []error
	)
	wg.Go(func() { wonA, errsA = raceAppends(t.Context(), a, "a", 4, total, start) })
	wg.Go(func() { wonB, errsB = raceAppends(t.Context(), b, "b", 4, total, start) })
	close(start)
	wg.Wait()
	for _, err := range append(errsA, errsB...) {
		t.Error(err)
	}
	won := map[int64]string{}
	for seq, who := range wonA {
		won[seq] = who
	}
	for seq, who := range wonB {
		if prev, ok := won[seq]; ok {
			t.Errorf("seq %d won by %s and %s", seq, prev, who)
		}
		won[seq] = who
	}
	checkRace(t, a, total, won)
	checkRace(t, b, total, won)
	t.Logf("seqs won: store a %d, store b %d", len(wonA), len(wonB))
}

// envAppender names the database a helper process appends to (see
// TestHelperAppender); envAppenderName names the process in its records.
const (
	envAppender     = "WEFT_SQLITE_TEST_APPENDER"
	envAppenderName = "WEFT_SQLITE_TEST_APPENDER_NAME"
	envAppenderN    = "WEFT_SQLITE_TEST_APPENDER_TOTAL"
)

// TestHelperAppender is not a test: TestTwoProcessesRace runs the test
// binary again with it, to append from another process. It prints the
// seqs it won, one "won SEQ WRITER" line each.
func TestHelperAppender(t *testing.T) {
	path := os.Getenv(envAppender)
	if path == "" {
		t.Skip("helper process for TestTwoProcessesRace")
	}
	total, err := strconv.ParseInt(os.Getenv(envAppenderN), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := make(chan struct{})
	close(start)
	won, errs := raceAppends(t.Context(), s, os.Getenv(envAppenderName), 3, total, start)
	for _, err := range errs {
		t.Error(err)
	}
	for seq, who := range won {
		fmt.Printf("won %d %s\n", seq, who)
	}
}

// TestTwoProcessesRace races appends to one thread from this process and
// two others (the test binary again, running TestHelperAppender), so that
// SQLite's file locks, not only its in-process bookkeeping, serialise them.
func TestTwoProcessesRace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const total = 300
	s, path := openTemp(t)
	if err := s.CreateThread(t.Context(), &store.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	type result struct {
		won map[int64]string
		err error
	}
	results := make(chan result, 3)
	for _, name := range []string{"p1", "p2"} {
		go func() {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperAppender$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), envAppender+"="+path, envAppenderName+"="+name, envAppenderN+"="+strconv.Itoa(total))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			won := map[int64]string{}
			sc := bufio.NewScanner(&stdout)
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				if len(f) == 3 && f[0] == "won" {
					seq, _ := strconv.ParseInt(f[1], 10, 64)
					won[seq] = f[2]
				}
			}
			if err != nil {
				err = fmt.Errorf("process %s: %w\n%s%s", name, err, stdout.Bytes(), stderr.Bytes())
			}
			results <- result{won, err}
		}()
	}
	go func() {
		start := make(chan struct{})
		close(start)
		won, errs := raceAppends(t.Context(), s, "p0", 3, total, start)
		results <- result{won, errors.Join(errs...)}
	}()
	won := map[int64]string{}
	for range 3 {
		r := <-results
		if r.err != nil {
			t.Error(r.err)
		}
		for seq, who := range r.won {
			if prev, ok := won[seq]; ok {
				t.Errorf("seq %d won by %s and %s", seq, prev, who)
			}
			won[seq] = who
		}
	}
	checkRace(t, s, total, won)
	per := map[string]int{}
	for _, who := range won {
		per[strings.Split(who, "/")[0]]++
	}
	t.Logf("seqs won per process: %v", per)
}

// TestBusyWaitCanceled holds the write lock in one store and appends with
// another: the append waits, and returns when its context ends rather than
// when the busy timeout does.
func TestBusyWaitCanceled(t *testing.T) {
	a, path := openTemp(t)
	b, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.CreateThread(t.Context(), &store.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	tx, err := a.writer.BeginTx(t.Context(), nil) // BEGIN IMMEDIATE: takes the write lock
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = b.Append(ctx, &store.Record{ThreadID: "t", Seq: 1, Kind: store.Step})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Append while another store holds the lock: %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Append gave up after %v", d)
	}
	// Once the lock is free, a waiting append goes through.
	done := make(chan error, 1)
	go func() { done <- b.Append(t.Context(), &store.Record{ThreadID: "t", Seq: 1, Kind: store.Step}) }()
	time.Sleep(20 * time.Millisecond)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("Append after the lock was released: %v", err)
	}
}

// TestTriggerRefusesOutOfOrder checks the schema itself keeps the log
// exactly-once, whoever writes to it.
func TestTriggerRefusesOutOfOrder(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	ins := func(seq int64) error {
		_, err := s.writer.ExecContext(ctx, `INSERT INTO records (thread_id, seq, run_id, step, kind, data, checksum, time) VALUES ('t', ?, '', 0, 'step', x'', 0, 0)`, seq)
		return err
	}
	for _, c := range []struct {
		seq int64
		ok  bool
	}{{2, false}, {0, false}, {1, true}, {1, false}, {3, false}, {2, true}} {
		err := ins(c.seq)
		if (err == nil) != c.ok {
			t.Errorf("INSERT at seq %d: %v, want ok=%v", c.seq, err, c.ok)
		}
		if err != nil && code(err) != sqliteConstraint {
			t.Errorf("INSERT at seq %d: %v, want a constraint error", c.seq, err)
		}
	}
	// Append's conflict, from the fast path's refusal.
	err := s.Append(ctx, &store.Record{ThreadID: "t", Seq: 2, Kind: store.Step})
	var ce *store.ConflictError
	if !errors.As(err, &ce) || ce.Want != 2 || ce.Got != 2 {
		t.Errorf("Append at a taken seq: %v, want ConflictError{Want 2, Got 2}", err)
	}
	// A missing thread is ErrNotFound at any seq.
	for _, seq := range []int64{1, 5} {
		if err := s.Append(ctx, &store.Record{ThreadID: "nope", Seq: seq, Kind: store.Step}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Append to a missing thread at %d: %v, want ErrNotFound", seq, err)
		}
	}
}

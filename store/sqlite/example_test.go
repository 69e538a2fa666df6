package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/sqlite"
)

func ExampleOpen() {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, ":memory:") // a file path in real use
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	if err := s.CreateThread(ctx, &store.Thread{ID: "t1", Workflow: "intentqa"}); err != nil && !errors.Is(err, store.ErrExists) {
		log.Fatal(err)
	}
	if err := s.PutRun(ctx, &store.Run{ID: "r1", ThreadID: "t1", Number: 1, Status: "running"}); err != nil {
		log.Fatal(err)
	}
	err = s.Append(ctx,
		&store.Record{ThreadID: "t1", RunID: "r1", Seq: 1, Kind: store.Snapshot, Data: []byte(`{"messages":[]}`)},
		&store.Record{ThreadID: "t1", RunID: "r1", Seq: 2, Step: 1, Kind: store.Step, Data: []byte(`{"node":"classify","set":{"intent":"qa"}}`)},
	)
	if err != nil {
		log.Fatal(err)
	}

	// A second writer of seq 2 loses.
	err = s.Append(ctx, &store.Record{ThreadID: "t1", RunID: "r1", Seq: 2, Step: 1, Kind: store.Step, Data: []byte(`{}`)})
	var conflict *store.ConflictError
	if errors.As(err, &conflict) {
		fmt.Println("conflict: log ends at", conflict.Got)
	}

	snap, err := s.LastSnapshot(ctx, "t1")
	if err != nil {
		log.Fatal(err)
	}
	recs, err := s.Records(ctx, "t1", snap.Seq+1) // fold these onto snap.Data
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(recs), "step after the snapshot:", string(recs[0].Data))
	// Output:
	// conflict: log ends at 2
	// 1 step after the snapshot: {"node":"classify","set":{"intent":"qa"}}
}

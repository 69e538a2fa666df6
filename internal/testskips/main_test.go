package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSummarize: one line per package, with the skips grouped by reason
// (datadir's message shortened to the dataset), failures named with their
// output below, and packages without tests marked.
func TestSummarize(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"m/a"}`,
		`{"Action":"run","Package":"m/a","Test":"TestOK"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestOK","Elapsed":0}`,
		`{"Action":"run","Package":"m/a","Test":"TestData"}`,
		`{"Action":"output","Package":"m/a","Test":"TestData","Output":"=== RUN   TestData\n"}`,
		`{"Action":"output","Package":"m/a","Test":"TestData","Output":"    tatqa_test.go:20: skipping: data \"tatqa/tatqa_dataset_dev.json\" not found (looked in [/x]); set WEFT_DATA ...\n"}`,
		`{"Action":"output","Package":"m/a","Test":"TestData","Output":"--- SKIP: TestData (0.00s)\n"}`,
		`{"Action":"skip","Package":"m/a","Test":"TestData","Elapsed":0}`,
		`{"Action":"run","Package":"m/a","Test":"TestSub/x"}`,
		`{"Action":"output","Package":"m/a","Test":"TestSub/x","Output":"    a_test.go:9: skipping: data \"tatqa/tatqa_dataset_dev.json\" not found (looked in [/x]); set ...\n"}`,
		`{"Action":"skip","Package":"m/a","Test":"TestSub/x","Elapsed":0}`,
		`{"Action":"run","Package":"m/a","Test":"TestPG"}`,
		`{"Action":"output","Package":"m/a","Test":"TestPG","Output":"    pg_test.go:5: WEFT_TEST_POSTGRES is not set\n"}`,
		`{"Action":"skip","Package":"m/a","Test":"TestPG","Elapsed":0}`,
		`{"Action":"pass","Package":"m/a","Elapsed":1.25}`,
		`{"Action":"output","Package":"m/b","Test":"TestBad","Output":"    b_test.go:3: want 1, got 2\n"}`,
		`{"Action":"fail","Package":"m/b","Test":"TestBad","Elapsed":0}`,
		`{"Action":"fail","Package":"m/b","Elapsed":0.5}`,
		`{"Action":"skip","Package":"m/c","Elapsed":0}`,
		`{"ImportPath":"m/d","Action":"build-output","Output":"d.go:1:1: syntax error\n"}`,
		`{"ImportPath":"m/d","Action":"build-fail"}`,
		`{"Action":"output","Package":"m/d","Output":"FAIL\tm/d [build failed]\n"}`,
		`{"Action":"fail","Package":"m/d","Elapsed":0}`,
	}, "\n")
	var out bytes.Buffer
	failed, err := summarize(strings.NewReader(in), &out)
	if err != nil || !failed {
		t.Fatalf("failed %v, err %v", failed, err)
	}
	want := `ok   m/a 1.2s: 1 passed, 3 skipped: no data tatqa/tatqa_dataset_dev.json ($WEFT_DATA, see examples/README.md) (2); WEFT_TEST_POSTGRES is not set (1)
FAIL m/b 0.5s: 0 passed, 1 failed (TestBad)
        b_test.go:3: want 1, got 2
?    m/c [no test files]
FAIL m/d 0.0s: 0 passed
    d.go:1:1: syntax error
    FAIL	m/d [build failed]
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

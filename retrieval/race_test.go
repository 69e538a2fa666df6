//go:build race

package retrieval

// raceDetector says this test binary was built with -race, under which
// modernc.org/sqlite's transpiled C runs about thirty times slower.
const raceDetector = true

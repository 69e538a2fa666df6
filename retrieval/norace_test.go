//go:build !race

package retrieval

// raceDetector says this test binary was built with -race.
const raceDetector = false

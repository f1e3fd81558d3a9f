// Package calibrate measures the client's ceiling: k6 against native load generators (wrk,
// h2load) on the same load, and the highest open-model rate it holds (the ladder, a Search).
package calibrate

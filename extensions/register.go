// Package extensions registers every k6 extension of proxybench: importing it (as
// cmd/k6 does, or `xk6 build --with github.com/proxybench/proxybench/extensions=./extensions`)
// puts k6/x/proxybench/http3, k6/x/proxybench/load, k6/x/proxybench/sse and k6/x/proxybench/ws
// in the k6 binary.
package extensions

import (
	_ "github.com/proxybench/proxybench/extensions/histout"  // --out proxybench-histograms
	_ "github.com/proxybench/proxybench/extensions/http3"    // k6/x/proxybench/http3
	_ "github.com/proxybench/proxybench/extensions/influxdb" // --out proxybench-influxdb
	_ "github.com/proxybench/proxybench/extensions/load"     // k6/x/proxybench/load
	_ "github.com/proxybench/proxybench/extensions/sse"      // k6/x/proxybench/sse
	_ "github.com/proxybench/proxybench/extensions/ws"       // k6/x/proxybench/ws
)

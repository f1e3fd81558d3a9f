// Command k6 is k6 with proxybench's extensions compiled in: the main.go `xk6 build` writes, for
// builds without xk6 (extensions/build-k6.sh). Importing the extensions also makes it offline by
// default (extensions/offline.go).
package main

import (
	k6cmd "go.k6.io/k6/v2/cmd"

	_ "github.com/proxybench/proxybench/extensions"
)

func main() {
	k6cmd.Execute()
}

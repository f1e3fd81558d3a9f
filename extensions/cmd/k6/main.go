// Command k6 is k6 with proxybench's extensions compiled in: what `xk6 build` would produce.
package main

import (
	k6cmd "go.k6.io/k6/v2/cmd"

	_ "github.com/proxybench/proxybench/extensions"
)

func main() {
	k6cmd.Execute()
}

// Command k6 is k6 with proxybench's extensions compiled in: what `xk6 build` would produce.
package main

import (
	"os"

	k6cmd "go.k6.io/k6/v2/cmd"

	_ "github.com/proxybench/proxybench/extensions"
)

func main() {
	offlineByDefault()
	k6cmd.Execute()
}

// offlineByDefault keeps bin/k6 off the internet however it is started (make, or `bin/k6 run`
// by hand): no usage report, and no automatic download of an extension a script imports (ours
// are compiled in, under k6/x/proxybench/, a prefix no registry entry owns). Set explicitly,
// either variable is left as given.
func offlineByDefault() {
	for k, v := range map[string]string{"K6_NO_USAGE_REPORT": "true", "K6_AUTO_EXTENSION_RESOLUTION": "false"} {
		if _, set := os.LookupEnv(k); !set {
			_ = os.Setenv(k, v)
		}
	}
}

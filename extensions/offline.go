package extensions

import "os"

// init makes every k6 built with these extensions offline by default, however it is built (go
// build of cmd/k6, or xk6, whose generated main.go sets nothing) and however it is started (make,
// or `bin/k6 run` by hand): no usage report, and no automatic download of an extension a script
// imports (ours are compiled in, under k6/x/proxybench/, a prefix no registry entry owns). k6
// reads both when its command runs, after every init. Set explicitly, either is left as given.
func init() {
	for k, v := range map[string]string{"K6_NO_USAGE_REPORT": "true", "K6_AUTO_EXTENSION_RESOLUTION": "false"} {
		if _, set := os.LookupEnv(k); !set {
			_ = os.Setenv(k, v)
		}
	}
}

package settings

import "github.com/proxybench/proxybench/scenarios"

// run are the make targets that run k6 against the local stack.
var (
	run      = []string{"k6", "bench", "soak", "calibrate"}
	anywhere = []string{"k6", "bench", "soak", "calibrate", "k6-cloud", "k8s"}
)

// table is every setting. Adding one here shows it in `make help` (proxybench settings), in
// SETTINGS.md's table (held to it by a test) and, with Script, in every k6 run's environment.
var table = []Setting{
	// what runs, against what
	{Name: "SCENARIO", Kind: Text, Help: "the scenario: a script of scenarios/ without .js", Commands: []string{"k6", "k6-cloud", "k8s", "k8s-run"}},
	{Name: "TARGET", Kind: Text, Default: "all", Help: "the target: all running ones, or a name of targets.json (soak: exactly one)", Commands: []string{"k6", "k6-cloud", "soak", "calibrate", "k8s", "k8s-run"}, Script: true},
	{Name: "TARGETS", Kind: Text, Default: "all", Help: "the targets brought up: all, or a comma-separated list of names", Commands: []string{"setup", "up", "bench", "compose-up"}, Local: true},
	{Name: "PROFILE", Kind: Choice, Values: scenarios.ProfileNames(), Default: scenarios.DefaultProfile(), Help: "the load profile: quick look, figures worth comparing, limits (soak: stress)", Commands: []string{"k6", "bench", "k6-cloud", "k8s", "k8s-run"}, Script: true},
	{Name: "PROTO", Kind: Choice, Values: []string{"h1", "h1c", "h2", "h3"}, Help: "the protocol of a probe or of bodies-down and bodies-up (default: each it runs over); soak's, default h1c", Commands: []string{"k6", "k6-cloud", "soak", "k8s", "k8s-run"}, Script: true},
	{Name: "TESTID", Kind: Text, DefaultIs: "a timestamp", Help: "tags every run and names results/<testid>/", Commands: anywhere, Script: true},
	{Name: "ARGS", Kind: Text, Help: "extra k6 flags, passed through", Commands: []string{"k6", "k6-cloud", "bench", "soak", "calibrate", "k8s-run"}},
	// bench and calibrate
	{Name: "PROTOS", Kind: List, Values: []string{"h1", "h1c", "h2", "h3"}, Default: "all", Help: "the protocols of the matrix (calibrate: h1c, h1, h2)", Commands: []string{"bench", "calibrate"}, Local: true},
	{Name: "MODES", Kind: List, Values: []string{"reused", "fresh", "probe", "capacity", "idle", "connections", "bodies", "open"}, Default: "all", Help: "what bench runs: reused, fresh, probe, capacity (all of them), and the sweeps only when named: idle, connections, bodies (calibrate: reused, fresh, open)", Commands: []string{"bench", "calibrate"}, Local: true},
	{Name: "CAPACITY_P99", Kind: Text, Default: "10", Help: "capacity: the latency goal, p99 in ms: the highest rate each target holds within it is its capacity", Commands: []string{"bench"}, Local: true},
	{Name: "CAPACITY_PROTOS", Kind: List, Values: []string{"h1c", "h1", "h2"}, Profile: "capacity_protos", Help: "capacity: the protocols searched (the native open model's)", Commands: []string{"bench"}, Local: true},
	{Name: "IDLE_CONNECTIONS", Kind: Count, Default: "10000", Help: "idle: the keep-alive connections held idle against each target (a trickle of requests over a few of them)", Commands: []string{"k6", "bench"}, Script: true},
	{Name: "CONNECTION_LEVELS", Kind: Text, Default: "16,64,256,1024,4096", Help: "connections: the concurrent connections of each step of the sweep of the reused cells", Commands: []string{"bench"}, Local: true},
	{Name: "BODY_SIZES", Kind: Text, Default: "0,1KiB,64KiB,1MiB,8MiB", Help: "MODES=bodies: the body sizes, downloads and uploads, each a run (bytes, KiB or MiB; 8MiB at most)", Commands: []string{"bench"}, Local: true},
	{Name: "RUNS", Kind: Count, Profile: "runs", Help: "runs per throughput cell", Commands: []string{"bench"}, Local: true},
	{Name: "ROUNDS", Kind: Count, Default: "1", Help: "calibrate's rounds: every client once per target and protocol each", Commands: []string{"calibrate"}, Local: true},
	{Name: "DASHBOARD", Kind: Switch, Help: "keep k6's web dashboard export of every run", Commands: []string{"bench"}, Local: true},
	{Name: "RESTART", Kind: Switch, Help: "restart the target before each of its runs", Commands: []string{"bench"}, Local: true},
	{Name: "PIN", Kind: Text, Help: "CPU pinning: auto, or client=0-3,proxy=4-5,upstream=6-7 (kernel CPU lists; 3 CPUs or more)", Commands: []string{"up", "bench"}, Local: true},
	{Name: "CALIBRATE_SECONDS", Kind: Text, Default: "3", Help: "seconds per client of bench's calibration against wrk/h2load on direct (0: none)", Commands: []string{"bench"}, Local: true},
	{Name: "CLIENT", Kind: Choice, Values: []string{"native", "k6"}, Default: "native", Help: "what drives reused and fresh h1c/h1/h2 and equal-load h1c/h1/h2: our native Go loop, or the k6/http scripts", Commands: run, Local: true},
	{Name: "RUN_TIMEOUT", Kind: Duration, DefaultIs: "5m + DURATION + WARMUP", Help: "a k6 run not ended by then is stopped as hung (0: never)", Commands: []string{"k6", "bench", "k8s-run"}, Local: true},
	{Name: "SEGMENTS", Kind: Count, Default: "1", Help: "one run split over N k6 instances started together, merged into one result (not probes)", Commands: []string{"k6"}, Local: true, Script: true},
	// the scenario knobs
	{Name: "DURATION", Knob: true, Kind: Duration, Profile: "duration", Help: "measured time of a reused, probe or equal-load run", Commands: anywhere, Script: true},
	{Name: "WARMUP", Knob: true, ZeroOK: true, Kind: Duration, Profile: "warmup", Help: "unmeasured load before it (0: none)", Commands: anywhere, Script: true},
	{Name: "CONNECTIONS", Knob: true, Kind: Count, Profile: "connections", Help: "reused connections (VUs)", Commands: anywhere, Script: true},
	{Name: "STREAMS", Knob: true, Kind: Count, Profile: "streams", Help: "h2 and h3: streams in flight per connection", Commands: anywhere, Script: true},
	{Name: "REQUESTS", Knob: true, Kind: Count, Profile: "requests", Help: "fresh: requests, each on a new connection", Commands: anywhere, Script: true},
	{Name: "FRESH_CONNECTIONS", Knob: true, Kind: Count, Profile: "fresh_connections", Help: "fresh: connections opened at a time", Commands: anywhere, Script: true},
	{Name: "FRESH_DURATION", Knob: true, Kind: Duration, Profile: "fresh_duration", Help: "fresh on the native loop: the least its window lasts; past REQUESTS it goes on, one request per new connection, until then (k6/http runs REQUESTS exactly)", Commands: anywhere, Script: true},
	{Name: "SAMPLES", Knob: true, Kind: Count, Profile: "samples", Help: "probes: samples per run", Commands: anywhere, Script: true},
	{Name: "UPLOAD_BYTES", Knob: true, Kind: Count, Default: "262144", Help: "upload: the body's bytes", Commands: anywhere, Script: true},
	// soak
	{Name: "MINUTES", Kind: Text, Default: "10", Help: "soak: minutes of load (fractions allowed, 120 at most)", Commands: []string{"soak"}, Local: true},
	{Name: "SOAK_INTERVAL", Kind: Duration, Default: "10s", Help: "soak: how often RSS and open files are read", Commands: []string{"soak"}, Local: true},
	// the stack
	{Name: "STACK", Kind: Text, Help: "the stack host's agent, https://IP:PORT: the load runs here, the stack there (README.md, Two machines)", Commands: []string{"k6", "bench", "calibrate", "status"}, Local: true},
	{Name: "STACK_TOKEN", Kind: Text, DefaultIs: "run/agent-token.json", Help: "with STACK: the agent's token file, copied from the stack host", Commands: []string{"k6", "bench", "calibrate", "status"}, Local: true},
	{Name: "STACK_LISTEN", Kind: Text, Help: "the stack host's IPv4 address a load host reaches: up starts every target and the upstream on it instead of loopback, agent serves on it at port 7443 (ip:port: another) (agent/README.md)", Commands: []string{"up", "agent"}, Local: true},
	{Name: "TLS_PROFILE", Kind: Choice, Values: []string{"x25519", "pq"}, Default: "x25519", Help: "the TLS profile of targets.json every target negotiates alike", Commands: []string{"up", "bench"}, Local: true},
	{Name: "OBSERVE", Kind: Switch, Help: "InfluxDB too (and an installed Grafana); k6 runs stream into it while it is up", Commands: []string{"up", "k6", "bench"}, Local: true},
	{Name: "GODOXY_BIN", Kind: Text, Help: "a GoDoxy binary to install (no registry serves GoDoxy)", Commands: []string{"setup", "up", "bench", "compose-up"}, Local: true},
	{Name: "GODOXY_RELEASE", Kind: Text, Help: "a GoDoxy release archive's URL and sha256 to install from", Commands: []string{"setup", "up", "bench"}, Local: true},
	{Name: "PROXYBENCH_CACHE", Kind: Text, DefaultIs: "~/.cache/proxybench", Help: "the install cache: proxies, tools, builds, outside the clone", Commands: []string{"setup", "up", "bench", "test"}, Local: true},
	{Name: "XK6_BIN", Kind: Text, DefaultIs: "xk6 on PATH", Help: "the xk6 that builds bin/k6 the k6 way (none: go build of the same main.go, said in one line)", Commands: []string{"k6-build", "build", "setup", "test"}},
	// Docker
	{Name: "NETWORK", Kind: Choice, Values: []string{"host", "bridge"}, Default: "host", Help: "compose networking: bridge (compose.bridge.yaml) for Docker Desktop", Commands: []string{"compose-up", "compose-down"}, Local: true},
	{Name: "COMPOSE_PROFILES", Kind: Text, Help: "compose profiles: observe (InfluxDB and Grafana), godoxy (with GODOXY_BIN)", Commands: []string{"compose-up"}, Local: true},
	// elsewhere
	{Name: "MODE", Kind: Choice, Values: []string{"local", "cloud"}, Default: "local", Help: "k6-cloud: run here streaming to k6 cloud, or on Grafana's load generators", Commands: []string{"k6-cloud"}},
	{Name: "TARGET_URL", Kind: Text, Help: "a remote target's base URL (k6-cloud MODE=cloud, k8s; the scripts without make)", Commands: []string{"k6-cloud", "k8s"}, Script: true},
	{Name: "K6_CLOUD_PROJECT_ID", Kind: Text, Help: "the k6 cloud project (with K6_CLOUD_TOKEN and K6_CLOUD_STACK_ID, or bin/k6 cloud login)", Commands: []string{"k6-cloud"}, Script: true},
	{Name: "PARALLELISM", Kind: Count, Help: "k8s, k8s-run: the runners a TestRun splits the scenario over", Commands: []string{"k8s", "k8s-run"}},
	{Name: "IMAGE", Kind: Text, Help: "k8s: the runner image (k8s/runner.Dockerfile)", Commands: []string{"k8s"}},
	{Name: "INFLUXDB_URL", Kind: Text, Help: "k8s: the InfluxDB the runners stream into", Commands: []string{"k8s"}},
	{Name: "SEPARATE", Kind: Switch, Help: "k8s: each runner on a node of its own", Commands: []string{"k8s"}},
	{Name: "NODE", Kind: Switch, Help: "k8s-up: a node too (kubelet, containerd, kube-proxy) in a network namespace of its own, for k8s-run", Commands: []string{"k8s-up"}},
	{Name: "K6_OPERATOR_DIR", Kind: Text, Help: "the k6-operator to install for k8s-up and test-k8s: a folder with manager-v1.6.0-linux-amd64.xz and crd/ (no registry serves it)", Commands: []string{"k8s-up", "test-k8s"}, Local: true},
	// saved runs
	{Name: "ID", Kind: Text, Help: "a saved run: a folder of results/", Commands: []string{"table", "report"}},
	{Name: "A", Kind: Text, Help: "compare: the run before", Commands: []string{"compare"}},
	{Name: "B", Kind: Text, Help: "compare: the run after", Commands: []string{"compare"}},
	// tests
	{Name: "GRAFANA_TARBALL", Kind: Text, Help: "test-dashboards: a Grafana build's tarball to unpack", Commands: []string{"test-dashboards"}, Local: true},
	{Name: "GRAFANA_HOME", Kind: Text, Help: "test-dashboards: an unpacked Grafana", Commands: []string{"test-dashboards"}, Local: true},
}

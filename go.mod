module github.com/proxybench/proxybench

go 1.26.0

require (
	github.com/compose-spec/compose-go/v2 v2.9.1
	github.com/gorilla/websocket v1.5.3
	github.com/quic-go/quic-go v0.65.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.1
	go.yaml.in/yaml/v3 v3.0.5
	golang.org/x/net v0.57.0
	golang.org/x/sys v0.47.0
)

require (
	github.com/distribution/reference v0.5.0 // indirect
	github.com/docker/go-connections v0.4.0 // indirect
	github.com/docker/go-units v0.5.0 // indirect
	github.com/go-viper/mapstructure/v2 v2.4.0 // indirect
	github.com/mattn/go-shellwords v1.0.12 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/quic-go/qpack v0.6.0 // indirect
	github.com/sirupsen/logrus v1.9.3 // indirect
	github.com/xhit/go-str2duration/v2 v2.1.0 // indirect
	golang.org/x/crypto v0.54.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/text v0.40.0 // indirect
)

// the k6 extensions' own module: runner merges the histograms k6 instances write
// (extensions/histogram), one source of the format for the writer and the reader
require github.com/proxybench/proxybench/extensions v0.0.0

replace github.com/proxybench/proxybench/extensions => ./extensions

package influxdb

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := GetConsolidatedConfig(nil, nil, "")
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:8086", c.Addr.String)
	assert.Equal(t, "k6", c.Bucket.String)
	assert.Equal(t, ModeAggregate, c.Mode.String)
	assert.Equal(t, time.Second, c.PushInterval.TimeDuration())
	assert.Equal(t, int64(4), c.ConcurrentWrites.Int64)
	assert.Equal(t, int64(200000), c.QueueLimit.Int64)
	assert.Equal(t, DefaultAggregateTags, c.AggregateTags)
	assert.False(t, c.Addr.Valid, "a default is not marked as set")
}

// Defaults, then JSON, then environment, then the --out URL: each layer overrides only what
// it sets.
func TestConfigLayering(t *testing.T) {
	t.Parallel()
	jsonConf := json.RawMessage(`{"addr":"http://json:1","bucket":"fromjson","organization":"org-json",
		"pushInterval":"5s","mode":"raw","queueLimit":10}`)
	env := map[string]string{
		"K6_INFLUXDB_BUCKET":            "fromenv",
		"K6_INFLUXDB_TOKEN":             "user:pass",
		"K6_INFLUXDB_CONCURRENT_WRITES": "2",
		"K6_INFLUXDB_MODE":              "aggregate",
		"K6_INFLUXDB_AGGREGATE_TAGS":    "target,testid",
		"UNRELATED":                     "x",
	}
	c, err := GetConsolidatedConfig(jsonConf, env, "http://url:2/fromurl?pushInterval=2s")
	require.NoError(t, err)
	assert.Equal(t, "http://url:2", c.Addr.String, "URL over JSON")
	assert.Equal(t, "fromurl", c.Bucket.String, "URL over env over JSON")
	assert.Equal(t, "org-json", c.Organization.String, "JSON over default")
	assert.Equal(t, "user:pass", c.Token.String)
	assert.Equal(t, 2*time.Second, c.PushInterval.TimeDuration(), "URL over JSON")
	assert.Equal(t, int64(2), c.ConcurrentWrites.Int64, "env over default")
	assert.Equal(t, ModeAggregate, c.Mode.String, "env over JSON")
	assert.Equal(t, int64(10), c.QueueLimit.Int64, "JSON over default")
	assert.Equal(t, []string{"target", "testid"}, c.AggregateTags)
}

func TestConfigURLOptions(t *testing.T) {
	t.Parallel()
	c, err := GetConsolidatedConfig(nil, nil,
		"https://db.example:8086/k6/autogen?mode=raw&pushInterval=250ms&concurrentWrites=8&queueLimit=7"+
			"&precision=1ms&tagsAsFields=vu:int,url&insecureSkipTLSVerify=true&organization=o&token=t")
	require.NoError(t, err)
	assert.Equal(t, "https://db.example:8086", c.Addr.String)
	assert.Equal(t, "k6/autogen", c.Bucket.String, "database/retention-policy")
	assert.Equal(t, ModeRaw, c.Mode.String)
	assert.Equal(t, 250*time.Millisecond, c.PushInterval.TimeDuration(), "raw mode takes any interval")
	assert.Equal(t, int64(8), c.ConcurrentWrites.Int64)
	assert.Equal(t, int64(7), c.QueueLimit.Int64)
	assert.Equal(t, time.Millisecond, c.Precision.TimeDuration())
	assert.Equal(t, []string{"vu:int", "url"}, c.TagsAsFields)
	assert.True(t, c.InsecureSkipTLSVerify.Bool)
	assert.Equal(t, "o", c.Organization.String)
	assert.Equal(t, "t", c.Token.String)
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		json string
		env  map[string]string
		url  string
		want string
	}{
		{name: "unknown JSON key", json: `{"adr":"http://x:1"}`, want: `unknown field "adr"`},
		{name: "unknown URL parameter", url: "http://x:1/k6?db=k6", want: `unknown query parameter "db"`},
		{name: "bad URL value", url: "http://x:1/k6?concurrentWrites=many", want: "concurrentWrites"},
		{name: "bad env value", env: map[string]string{"K6_INFLUXDB_QUEUE_LIMIT": "lots"}, want: "K6_INFLUXDB_QUEUE_LIMIT"},
		{name: "mode", env: map[string]string{"K6_INFLUXDB_MODE": "sampled"}, want: "K6_INFLUXDB_MODE must be aggregate or raw"},
		{
			name: "fractional interval when aggregating", env: map[string]string{"K6_INFLUXDB_PUSH_INTERVAL": "1500ms"},
			want: "whole number of seconds",
		},
		{name: "zero interval", env: map[string]string{"K6_INFLUXDB_PUSH_INTERVAL": "0s"}, want: "must be positive"},
		{name: "writes", env: map[string]string{"K6_INFLUXDB_CONCURRENT_WRITES": "0"}, want: "K6_INFLUXDB_CONCURRENT_WRITES"},
		{name: "queue", env: map[string]string{"K6_INFLUXDB_QUEUE_LIMIT": "0"}, want: "K6_INFLUXDB_QUEUE_LIMIT"},
		{name: "address", env: map[string]string{"K6_INFLUXDB_ADDR": "127.0.0.1:8086"}, want: "K6_INFLUXDB_ADDR"},
		{name: "bucket", json: `{"bucket":""}`, want: "K6_INFLUXDB_BUCKET"},
		{name: "precision", env: map[string]string{"K6_INFLUXDB_PRECISION": "10ms"}, want: "K6_INFLUXDB_PRECISION"},
		{name: "field type", env: map[string]string{"K6_INFLUXDB_TAGS_AS_FIELDS": "vu:uint"}, want: `type "uint"`},
		{name: "field twice", env: map[string]string{"K6_INFLUXDB_TAGS_AS_FIELDS": "vu,vu:int"}, want: "more than once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var raw json.RawMessage
			if tc.json != "" {
				raw = json.RawMessage(tc.json)
			}
			_, err := GetConsolidatedConfig(raw, tc.env, tc.url)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

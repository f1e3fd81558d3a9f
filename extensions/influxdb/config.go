package influxdb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mstoykov/envconfig"
	"gopkg.in/guregu/null.v3"

	"go.k6.io/k6/v2/lib/types"
)

// Modes of the output.
const (
	// ModeAggregate writes, per push interval and per tag set, one point per metric.
	ModeAggregate = "aggregate"
	// ModeRaw writes one point per sample, as grafana/xk6-output-influxdb does.
	ModeRaw = "raw"
)

// DefaultAggregateTags are the tags aggregated points keep (the low-cardinality tags of scenarios/README.md,
// plus the status and whether it was expected, the instance of a split run, and a sweep's
// point, which keeps a sweep's runs apart from the matrix's cells); every other tag is folded
// away.
var DefaultAggregateTags = []string{
	"testid", "target", "proto", "mode", "scenario", "route", "status", "expected_response", InstanceTag, "point",
}

// DefaultHistograms are the trends whose merged distribution is written: every one ("*"), so
// that a probe's own trends (scenarios/catalogue.json names them; this module cannot read it)
// reach the dashboards without a list here. Every trend's samples go into its histogram
// anyway (series.add): only the points written per window depend on this list.
var DefaultHistograms = []string{"*"}

// Config is the output's configuration. The connection variables are grafana/xk6-output-influxdb's,
// so that a user can switch between the two outputs without touching them.
type Config struct {
	Addr                  null.String        `json:"addr" envconfig:"K6_INFLUXDB_ADDR"`
	Organization          null.String        `json:"organization" envconfig:"K6_INFLUXDB_ORGANIZATION"`
	Bucket                null.String        `json:"bucket" envconfig:"K6_INFLUXDB_BUCKET"`
	Token                 null.String        `json:"token" envconfig:"K6_INFLUXDB_TOKEN"`
	InsecureSkipTLSVerify null.Bool          `json:"insecureSkipTLSVerify" envconfig:"K6_INFLUXDB_INSECURE"`
	PushInterval          types.NullDuration `json:"pushInterval" envconfig:"K6_INFLUXDB_PUSH_INTERVAL"`
	ConcurrentWrites      null.Int           `json:"concurrentWrites" envconfig:"K6_INFLUXDB_CONCURRENT_WRITES"`
	Precision             types.NullDuration `json:"precision" envconfig:"K6_INFLUXDB_PRECISION"`
	TagsAsFields          []string           `json:"tagsAsFields" envconfig:"K6_INFLUXDB_TAGS_AS_FIELDS"`

	// Ours.
	Mode          null.String `json:"mode" envconfig:"K6_INFLUXDB_MODE"`
	QueueLimit    null.Int    `json:"queueLimit" envconfig:"K6_INFLUXDB_QUEUE_LIMIT"`
	AggregateTags []string    `json:"aggregateTags" envconfig:"K6_INFLUXDB_AGGREGATE_TAGS"`
	Histograms    []string    `json:"histograms" envconfig:"K6_INFLUXDB_HISTOGRAMS"`
}

// NewConfig is the configuration with every default set (and marked as a default).
func NewConfig() Config {
	return Config{
		Addr:             null.NewString("http://127.0.0.1:8086", false),
		Bucket:           null.NewString("k6", false),
		PushInterval:     types.NewNullDuration(time.Second, false),
		ConcurrentWrites: null.NewInt(4, false),
		Precision:        types.NewNullDuration(time.Nanosecond, false),
		TagsAsFields:     []string{"vu:int", "iter:int", "url"},
		Mode:             null.NewString(ModeAggregate, false),
		QueueLimit:       null.NewInt(200000, false),
		AggregateTags:    DefaultAggregateTags,
		Histograms:       DefaultHistograms,
	}
}

// Apply returns c with every value that cfg sets.
func (c Config) Apply(cfg Config) Config {
	if cfg.Addr.Valid {
		c.Addr = cfg.Addr
	}
	if cfg.Organization.Valid {
		c.Organization = cfg.Organization
	}
	if cfg.Bucket.Valid {
		c.Bucket = cfg.Bucket
	}
	if cfg.Token.Valid {
		c.Token = cfg.Token
	}
	if cfg.InsecureSkipTLSVerify.Valid {
		c.InsecureSkipTLSVerify = cfg.InsecureSkipTLSVerify
	}
	if cfg.PushInterval.Valid {
		c.PushInterval = cfg.PushInterval
	}
	if cfg.ConcurrentWrites.Valid {
		c.ConcurrentWrites = cfg.ConcurrentWrites
	}
	if cfg.Precision.Valid {
		c.Precision = cfg.Precision
	}
	if len(cfg.TagsAsFields) > 0 {
		c.TagsAsFields = cfg.TagsAsFields
	}
	if cfg.Mode.Valid {
		c.Mode = cfg.Mode
	}
	if cfg.QueueLimit.Valid {
		c.QueueLimit = cfg.QueueLimit
	}
	if len(cfg.AggregateTags) > 0 {
		c.AggregateTags = cfg.AggregateTags
	}
	if len(cfg.Histograms) > 0 {
		c.Histograms = cfg.Histograms
	}
	return c
}

// Validate reports the first value that can't be used, naming its variable.
func (c Config) Validate() error {
	u, err := url.Parse(c.Addr.String)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("K6_INFLUXDB_ADDR must be an http:// or https:// URL such as http://127.0.0.1:8086, got %q",
			c.Addr.String)
	}
	if c.Bucket.String == "" {
		return errors.New("K6_INFLUXDB_BUCKET must not be empty (InfluxDB 1.8: the database, or database/retention-policy)")
	}
	switch c.Mode.String {
	case ModeAggregate, ModeRaw:
	default:
		return fmt.Errorf("K6_INFLUXDB_MODE must be %s or %s, got %q", ModeAggregate, ModeRaw, c.Mode.String)
	}
	push := c.PushInterval.TimeDuration()
	if push <= 0 {
		return fmt.Errorf("K6_INFLUXDB_PUSH_INTERVAL must be positive, got %s", push)
	}
	if c.Mode.String == ModeAggregate && push%time.Second != 0 {
		// the dashboards add up each window's per-second figures in 1 s buckets
		return fmt.Errorf("K6_INFLUXDB_PUSH_INTERVAL must be a whole number of seconds in %s mode, got %s",
			ModeAggregate, push)
	}
	if c.ConcurrentWrites.Int64 <= 0 {
		return fmt.Errorf("K6_INFLUXDB_CONCURRENT_WRITES must be a positive number, got %d", c.ConcurrentWrites.Int64)
	}
	if c.QueueLimit.Int64 <= 0 {
		return fmt.Errorf("K6_INFLUXDB_QUEUE_LIMIT must be a positive number of points, got %d", c.QueueLimit.Int64)
	}
	if _, err := precisionName(c.Precision.TimeDuration()); err != nil {
		return err
	}
	if _, err := makeFieldKinds(c.TagsAsFields); err != nil {
		return err
	}
	for _, t := range c.AggregateTags {
		if t == "" {
			return errors.New("K6_INFLUXDB_AGGREGATE_TAGS has an empty tag name")
		}
	}
	for _, t := range c.Histograms {
		if t == "" {
			return errors.New("K6_INFLUXDB_HISTOGRAMS has an empty trend name")
		}
	}
	return nil
}

// precisionName is the write API's name for a timestamp precision.
func precisionName(d time.Duration) (string, error) {
	switch d {
	case time.Nanosecond:
		return "ns", nil
	case time.Microsecond:
		return "us", nil
	case time.Millisecond:
		return "ms", nil
	case time.Second:
		return "s", nil
	}
	return "", fmt.Errorf("K6_INFLUXDB_PRECISION must be 1ns, 1us, 1ms or 1s, got %s", d)
}

// parseJSON reads the output's section of k6's JSON config ("collectors"); unknown keys are
// errors, not silently ignored.
func parseJSON(data json.RawMessage) (Config, error) {
	conf := Config{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&conf); err != nil {
		return conf, fmt.Errorf("the JSON configuration of %s: %w", outputName, err)
	}
	return conf, nil
}

// parseURL reads `--out proxybench-influxdb=http://host:8086/bucket?mode=raw&pushInterval=5s`:
// the address, the bucket as the path, and any option by its JSON name as a query parameter.
func parseURL(text string) (Config, error) {
	c := Config{}
	u, err := url.Parse(text)
	if err != nil {
		return c, fmt.Errorf("%s=%s: %w", outputName, text, err)
	}
	if u.Host != "" {
		c.Addr = null.StringFrom(u.Scheme + "://" + u.Host)
	}
	if bucket := strings.TrimPrefix(u.Path, "/"); bucket != "" {
		c.Bucket = null.StringFrom(bucket)
	}
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		var perr error
		switch k {
		case "organization":
			c.Organization = null.StringFrom(v)
		case "token":
			c.Token = null.StringFrom(v)
		case "insecureSkipTLSVerify":
			var b bool
			b, perr = strconv.ParseBool(v)
			c.InsecureSkipTLSVerify = null.BoolFrom(b)
		case "pushInterval":
			perr = c.PushInterval.UnmarshalText([]byte(v))
		case "concurrentWrites":
			var n int64
			n, perr = strconv.ParseInt(v, 10, 64)
			c.ConcurrentWrites = null.IntFrom(n)
		case "precision":
			perr = c.Precision.UnmarshalText([]byte(v))
		case "tagsAsFields":
			c.TagsAsFields = splitList(v)
		case "mode":
			c.Mode = null.StringFrom(v)
		case "queueLimit":
			var n int64
			n, perr = strconv.ParseInt(v, 10, 64)
			c.QueueLimit = null.IntFrom(n)
		case "aggregateTags":
			c.AggregateTags = splitList(v)
		case "histograms":
			c.Histograms = splitList(v)
		default:
			return c, fmt.Errorf("%s: unknown query parameter %q in %s", outputName, k, text)
		}
		if perr != nil {
			return c, fmt.Errorf("%s: query parameter %s=%q: %w", outputName, k, v, perr)
		}
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// GetConsolidatedConfig layers, as every k6 output does: defaults, then the JSON config, then
// the environment, then the --out URL. The result is validated.
func GetConsolidatedConfig(jsonRawConf json.RawMessage, env map[string]string, confURL string) (Config, error) {
	result := NewConfig()
	if len(jsonRawConf) > 0 {
		jsonConf, err := parseJSON(jsonRawConf)
		if err != nil {
			return result, err
		}
		result = result.Apply(jsonConf)
	}

	envConf := Config{}
	if err := envconfig.Process("", &envConf, func(key string) (string, bool) {
		v, ok := env[key]
		return v, ok
	}); err != nil {
		return result, fmt.Errorf("%s: %w", outputName, err)
	}
	result = result.Apply(envConf)

	if confURL != "" {
		urlConf, err := parseURL(confURL)
		if err != nil {
			return result, err
		}
		result = result.Apply(urlConf)
	}
	return result, result.Validate()
}

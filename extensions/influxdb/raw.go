package influxdb

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.k6.io/k6/v2/metrics"
)

// Raw mode writes one point per sample in grafana/xk6-output-influxdb's shape, so that its
// dashboards read it: the metric name as measurement, every tag as a tag except those of
// K6_INFLUXDB_TAGS_AS_FIELDS (typed fields), the sample's metadata (vu, iter when enabled) as
// fields, and the value as the field "value".

// fieldKind is the type a tag turned field is written as.
type fieldKind int

const (
	kindString fieldKind = iota
	kindInt
	kindFloat
	kindBool
)

// makeFieldKinds reads "name[:type]" entries, type one of string (default), int, float, bool.
func makeFieldKinds(tagsAsFields []string) (map[string]fieldKind, error) {
	kinds := make(map[string]fieldKind, len(tagsAsFields))
	for _, entry := range tagsAsFields {
		name, typ, _ := strings.Cut(entry, ":")
		if _, dup := kinds[name]; dup {
			return nil, fmt.Errorf("K6_INFLUXDB_TAGS_AS_FIELDS names %q more than once", name)
		}
		switch typ {
		case "", "string":
			kinds[name] = kindString
		case "int":
			kinds[name] = kindInt
		case "float":
			kinds[name] = kindFloat
		case "bool":
			kinds[name] = kindBool
		default:
			return nil, fmt.Errorf("K6_INFLUXDB_TAGS_AS_FIELDS: type %q of %q must be string, int, float or bool", typ, name)
		}
	}
	return kinds, nil
}

// typedField converts a tag value to its field kind, written with the line protocol's type as
// grafana/xk6-output-influxdb writes it (vu=5i, a bool as true/false), so that both outputs
// can share a bucket without field type conflicts; a value that doesn't parse stays a string.
func typedField(key, val string, kind fieldKind) field {
	str := field{key: key, str: val, isString: true}
	switch kind {
	case kindInt:
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return str
		}
		return field{key: key, lit: strconv.FormatInt(n, 10) + "i"}
	case kindFloat:
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return str
		}
		return field{key: key, value: f}
	case kindBool:
		b, err := strconv.ParseBool(val)
		if err != nil {
			return str
		}
		return field{key: key, lit: strconv.FormatBool(b)}
	}
	return str
}

// rawEncoder caches, per distinct tag set, the escaped tags and the fields taken from tags.
type rawEncoder struct {
	instance  string // instance_id of a split run's instance, "" otherwise
	kinds     map[string]fieldKind
	precision time.Duration
	cache     map[*metrics.TagSet]rawTags
	fields    []field
	prefix    []byte
}

type rawTags struct {
	tags   string
	fields []field
}

func newRawEncoder(kinds map[string]fieldKind, precision time.Duration, instance string) *rawEncoder {
	return &rawEncoder{kinds: kinds, precision: precision, cache: map[*metrics.TagSet]rawTags{}, instance: instance}
}

func (r *rawEncoder) tags(ts *metrics.TagSet) rawTags {
	if c, ok := r.cache[ts]; ok {
		return c
	}
	var m map[string]string
	if ts != nil {
		m = ts.Map()
	}
	if _, tagged := m[InstanceTag]; r.instance != "" && !tagged {
		if m == nil {
			m = map[string]string{}
		}
		m[InstanceTag] = r.instance
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	pairs := make([][2]string, 0, len(keys))
	var fields []field
	for _, k := range keys {
		if kind, ok := r.kinds[k]; ok {
			fields = append(fields, typedField(k, m[k], kind))
			continue
		}
		pairs = append(pairs, [2]string{k, m[k]})
	}
	c := rawTags{tags: string(appendTags(nil, pairs)), fields: fields}
	r.cache[ts] = c
	return c
}

// encode appends one point per sample.
func (r *rawEncoder) encode(containers []metrics.SampleContainer, e *encoder) {
	for _, c := range containers {
		samples := c.GetSamples()
		for i := range samples {
			s := &samples[i]
			t := r.tags(s.Tags)
			r.prefix = append(r.prefix[:0], measurementEscaper.Replace(s.Metric.Name)...)
			r.prefix = append(r.prefix, t.tags...)
			r.fields = append(r.fields[:0], field{key: "value", value: s.Value})
			r.fields = append(r.fields, t.fields...)
			for k, v := range s.Metadata {
				if kind, ok := r.kinds[k]; ok {
					r.fields = append(r.fields, typedField(k, v, kind))
				} else {
					r.fields = append(r.fields, field{key: k, str: v, isString: true})
				}
			}
			var ok bool
			if e.buf, ok = appendPoint(e.buf, r.prefix, r.fields, s.Time.UnixNano()/int64(r.precision)); ok {
				e.points++
			}
		}
	}
}

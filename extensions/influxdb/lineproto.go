package influxdb

import (
	"math"
	"strconv"
	"strings"
)

// InfluxDB line protocol: measurement,tag=v,… field=v,… timestamp. Each escaper handles the
// characters that are special where it writes; a newline can't be escaped anywhere and
// becomes a space.
var (
	measurementEscaper = strings.NewReplacer(",", `\,`, " ", `\ `, "\n", `\ `)
	keyEscaper         = strings.NewReplacer(",", `\,`, "=", `\=`, " ", `\ `, "\n", `\ `)
	stringFieldEscaper = strings.NewReplacer(`"`, `\"`, `\`, `\\`, "\n", " ")
)

// field is one field of a point: a float, or a string when isString, or an integer or a
// boolean when lit holds it as the line protocol writes it ("5i", "true").
type field struct {
	key      string
	value    float64
	str      string
	isString bool
	lit      string
}

// appendTags appends ",k=v" for every pair with a non-empty value (InfluxDB has no empty
// tags), keys escaped; pairs must come sorted by key, as InfluxDB stores them.
func appendTags(b []byte, pairs [][2]string) []byte {
	for _, kv := range pairs {
		if kv[1] == "" {
			continue
		}
		b = append(b, ',')
		b = append(b, keyEscaper.Replace(kv[0])...)
		b = append(b, '=')
		b = append(b, keyEscaper.Replace(kv[1])...)
	}
	return b
}

// appendPoint appends one line. series is the escaped "measurement,tags" prefix. Fields that
// are NaN or ±Inf (which InfluxDB refuses) are left out; a point with no field left is not
// written and appendPoint reports false.
func appendPoint(b []byte, series []byte, fields []field, ts int64) ([]byte, bool) {
	start := len(b)
	b = append(b, series...)
	b = append(b, ' ')
	n := 0
	for _, f := range fields {
		if !f.isString && f.lit == "" && (math.IsNaN(f.value) || math.IsInf(f.value, 0)) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, keyEscaper.Replace(f.key)...)
		b = append(b, '=')
		if f.lit != "" {
			b = append(b, f.lit...)
		} else if f.isString {
			b = append(b, '"')
			b = append(b, stringFieldEscaper.Replace(f.str)...)
			b = append(b, '"')
		} else {
			b = strconv.AppendFloat(b, f.value, 'g', -1, 64)
		}
	}
	if n == 0 {
		return b[:start], false
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, '\n')
	return b, true
}

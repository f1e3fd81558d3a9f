package settings

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The knobs' rules, as the scripts have them (scenarios/lib/config.js: DURATION_RE, the zero
// test and positiveInt's), verbatim: a test holds the two to each other.
var (
	DurationRE = regexp.MustCompile(`^(\d+(\.\d+)?(ms|s|m|h))+$`)
	ZeroRE     = regexp.MustCompile(`^0+(ms|s|m|h)?$`)
	CountRE    = regexp.MustCompile(`^\d+$`)
	// durationPartRE is one number and unit of a duration: 1m30s is 1m and 30s.
	durationPartRE = regexp.MustCompile(`(\d+(?:\.\d+)?)(ms|s|m|h)`)
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, the largest count k6 takes exactly.
const maxSafeInteger = 1<<53 - 1

// Knobs are the scenario knobs of kind k (Duration or Count), in table order.
func Knobs(k Kind) []string {
	return Names(func(s Setting) bool { return s.Knob && s.Kind == k })
}

// CheckKnobs checks the scenario knobs getenv returns, as the scripts will, so that a bad one
// stops a command before anything starts; empty is the profile's value.
func CheckKnobs(getenv func(string) string) error {
	var errs []error
	for _, s := range table {
		v := strings.TrimSpace(getenv(s.Name))
		if !s.Knob || v == "" {
			continue
		}
		switch s.Kind {
		case Duration:
			if s.ZeroOK && ZeroRE.MatchString(v) {
				continue
			}
			if !DurationRE.MatchString(v) || Seconds(v) <= 0 {
				zero := ""
				if s.ZeroOK {
					zero = ", or 0 for none"
				}
				errs = append(errs, fmt.Errorf("%s=%q: want a duration longer than zero such as 10s, 1m30s or 500ms%s (empty: the profile's)", s.Name, v, zero))
			}
		case Count:
			n, err := strconv.ParseUint(v, 10, 64)
			if !CountRE.MatchString(v) || err != nil || n < 1 || n > maxSafeInteger {
				errs = append(errs, fmt.Errorf("%s=%q: want a whole number of at least 1 (empty: the profile's)", s.Name, v))
			}
		}
	}
	return errors.Join(errs...)
}

// Seconds is the length of a duration DurationRE matched, as config.js's seconds().
func Seconds(v string) float64 {
	units := map[string]float64{"ms": 0.001, "s": 1, "m": 60, "h": 3600}
	total := 0.0
	for _, m := range durationPartRE.FindAllStringSubmatch(v, -1) {
		n, _ := strconv.ParseFloat(m[1], 64)
		total += n * units[m[2]]
	}
	return total
}

// On is the switch name's value v, as the Makefile reads one (truthy): on when 1, true or yes,
// off when empty, 0, false or no; anything else is an error, not "off", so that a typo is not
// a run without what was asked for.
func On(name, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes":
		return true, nil
	case "", "0", "false", "no":
		return false, nil
	default:
		return false, fmt.Errorf("%s=%q: a switch is 1, true or yes (on), or empty, 0, false or no (off)", name, v)
	}
}

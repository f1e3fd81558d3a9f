package result

import (
	"encoding/json"
	"errors"
	"fmt"
)

// convert brings a result file's document of an older schema to Schema, so that one reader and
// one judge (verdict) read every file: it moves fields, it never judges. Schema 1 → 2:
//   - equal load's offered rate and requests per iteration go into the plan (plan.rate,
//     plan.per_iteration), where verdict.Overload reads them, from config.rate and from the plan's
//     requests in flight over the VU pool (config.vus);
//   - "overload", the script's own word in schema 1, is dropped: the verdict says it from the
//     counts, for old files and new ones alike;
//   - a trend's p99.9 written as "p99.9" is "p999".
//
// It says whether it changed the document.
func convert(doc map[string]json.RawMessage) (bool, error) {
	var v int
	if raw, ok := doc["schema"]; ok {
		if err := json.Unmarshal(raw, &v); err != nil {
			return false, fmt.Errorf("schema: %w", err)
		}
	}
	switch v {
	case Schema:
		return false, nil
	case 1:
		return true, fromSchema1(doc)
	}
	return false, errors.New(SchemaMismatch("result", v, Schema))
}

func fromSchema1(doc map[string]json.RawMessage) error {
	delete(doc, "overload")
	var cfg struct {
		Rate float64   `json:"rate"`
		VUs  []float64 `json:"vus"`
	}
	_ = json.Unmarshal(doc["config"], &cfg)
	if cfg.Rate > 0 {
		plan := map[string]any{}
		if raw, ok := doc["plan"]; ok {
			if err := json.Unmarshal(raw, &plan); err != nil {
				return fmt.Errorf("plan: %w", err)
			}
		}
		plan["rate"] = cfg.Rate
		per := 1.0
		if inFlight, ok := plan["in_flight"].(float64); ok && len(cfg.VUs) == 2 && cfg.VUs[1] > 0 {
			per = max(1, inFlight/cfg.VUs[1])
		}
		plan["per_iteration"] = per
		if err := set(doc, "plan", plan); err != nil {
			return err
		}
	}
	for _, k := range []string{"latency_ms", "ttfb_ms"} {
		var st map[string]any
		if json.Unmarshal(doc[k], &st) == nil && st != nil {
			if p, ok := st["p99.9"]; ok {
				st["p999"] = p
				delete(st, "p99.9")
				if err := set(doc, k, st); err != nil {
					return err
				}
			}
		}
	}
	return set(doc, "schema", Schema)
}

func set(doc map[string]json.RawMessage, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	doc[key] = raw
	return nil
}

package http3

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/js/modulestest"
)

func TestExports(t *testing.T) {
	t.Parallel()

	rt := modulestest.NewRuntime(t)
	mi := New().NewModuleInstance(rt.VU)
	named := mi.Exports().Named
	for _, name := range []string{"request", "get", "head", "post", "put", "patch", "del", "options", "batch"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			assert.Contains(t, named, name)
		})
	}
	assert.Len(t, named, 9)
}

func TestInitContext(t *testing.T) {
	t.Parallel()

	tests := []struct{ name, js string }{
		{"get", `http3.get("https://bench.test/")`},
		{"request", `http3.request("GET", "https://bench.test/")`},
		{"batch", `http3.batch(["https://bench.test/"])`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt := modulestest.NewRuntime(t)
			mi := New().NewModuleInstance(rt.VU)
			require.NoError(t, rt.VU.Runtime().Set("http3", mi.Exports().Named))
			_, err := rt.RunOnEventLoop(tc.js)
			require.ErrorContains(t, err, "making http3 requests in the init context is not supported")
		})
	}
}

// eventType stands for k6's internal event.Type: a uint8 with String().
type eventType uint8

func (e eventType) String() string {
	switch e {
	case 3:
		return "TestEnd"
	case 6:
		return "Exit"
	case 5:
		return "IterEnd"
	default:
		return fmt.Sprintf("eventType(%d)", uint8(e))
	}
}

func TestEventTypes(t *testing.T) {
	t.Parallel()

	subscribe := func(...eventType) (uint64, <-chan struct{}) { return 0, nil }
	assert.Equal(t, []eventType{3, 6}, eventTypes(subscribe, "TestEnd", "Exit"))
	assert.Equal(t, []eventType{5}, eventTypes(subscribe, "IterEnd"))
	assert.Empty(t, eventTypes(subscribe, "NoSuchEvent"))
}

package extensions

import (
	"testing"

	"go.k6.io/k6/v2/ext"
)

// Importing this package must register every module scripts import.
func TestRegistered(t *testing.T) {
	t.Parallel()
	mods := ext.Get(ext.JSExtension)
	for _, name := range []string{"k6/x/proxybench/http3", "k6/x/proxybench/sse", "k6/x/proxybench/load"} {
		if _, ok := mods[name]; !ok {
			t.Errorf("%s is not registered", name)
		}
	}
}

package influxdb

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/v2/ext"
)

func TestRegister(t *testing.T) {
	t.Parallel()
	extension, ok := ext.Get(ext.OutputExtension)["proxybench-influxdb"]
	require.True(t, ok, "the output is registered as proxybench-influxdb")
	assert.Equal(t, "proxybench-influxdb", extension.Name)
}
